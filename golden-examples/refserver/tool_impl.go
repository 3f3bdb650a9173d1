package refserver

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Tool implementations. Arguments arrive already validated against the
// tool's inputSchema, so type assertions on required fields cannot fail.

func (s *Server) getWeather(_ context.Context, _ *request, args map[string]any) (map[string]any, *Error) {
	location := args["location"].(string)
	units, _ := args["units"].(string)
	if units == "" {
		units = "celsius"
	}
	if strings.TrimSpace(location) == "" {
		return toolError("location must not be blank: give a city name such as \"Seattle, WA\""), nil
	}
	temp, conditions, ok := fakeWeather(location, units)
	if !ok {
		return toolError(fmt.Sprintf("unknown location %q: give a city name such as \"Seattle, WA\"", truncate(location, 100))), nil
	}
	// CALL-4: matches outputSchema exactly (all four properties, nothing else).
	return toolStructured(map[string]any{
		"location":    strings.TrimSpace(location),
		"temperature": temp,
		"units":       units,
		"conditions":  conditions,
	}), nil
}

func (s *Server) searchInvoices(_ context.Context, _ *request, args map[string]any) (map[string]any, *Error) {
	customer := args["customer_id"].(string)
	status, _ := args["status"].(string)
	limit := 10
	if n, ok := number(args["limit"]); ok {
		limit = int(n)
	}
	matches := []any{}
	total := 0
	for _, inv := range invoicesFor(customer) {
		if status != "" && inv.Status != status {
			continue
		}
		total++
		if len(matches) < limit {
			matches = append(matches, map[string]any{
				"id": inv.ID, "customer_id": inv.CustomerID, "status": inv.Status,
				"amount_cents": inv.AmountCents, "currency": inv.Currency, "due_date": inv.DueDate,
			})
		}
	}
	return toolStructured(map[string]any{"customer_id": customer, "invoices": matches, "total": total}), nil
}

func (s *Server) lookupRegion(_ context.Context, _ *request, args map[string]any) (map[string]any, *Error) {
	region, _ := args["region"].(string)
	if region == "" {
		region = "global"
	}
	query := args["query"].(string)
	n := hash64("region", region, query) % 10
	return toolText(fmt.Sprintf("Region %s: %d records match %q.", region, n, query)), nil
}

// slowCount counts to n, pausing StepDelay between steps. Progress and log
// notifications are emitted only when the request asked for them (PROG-1,
// LOG-1); the transport streams them before the final response.
func (s *Server) slowCount(ctx context.Context, r *request, args map[string]any) (map[string]any, *Error) {
	f, _ := number(args["n"])
	n := int(f)
	const logger = "slow_count"
	if r.log("info", logger, fmt.Sprintf("counting to %d", n)) != nil {
		return nil, nil
	}
	timer := time.NewTimer(s.opts.StepDelay)
	defer timer.Stop()
	for i := 1; i <= n; i++ {
		select {
		case <-ctx.Done():
			return nil, nil // CANC-2/CANC-3: stop, send nothing more
		case <-timer.C:
			timer.Reset(s.opts.StepDelay)
		}
		if r.progress(i, n, fmt.Sprintf("counted %d of %d", i, n)) != nil ||
			r.log("debug", logger, fmt.Sprintf("counted %d", i)) != nil {
			return nil, nil // the request's stream is gone
		}
	}
	if r.log("notice", logger, fmt.Sprintf("finished counting to %d", n)) != nil {
		return nil, nil
	}
	return toolStructured(map[string]any{"count": n}), nil
}
