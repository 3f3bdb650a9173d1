package refserver

import (
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"unicode/utf8"
)

// All served data is derived from its inputs by hashing: no clock, no
// randomness, so every run and every replica answers the same (TOOL-2).

func hash64(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

var customerIDPattern = lazyRegexp(`^C[0-9]{4}$`)

// invoice is one fake invoice; the JSON names match search_invoices' outputSchema.
type invoice struct {
	ID          string `json:"id"`
	CustomerID  string `json:"customer_id"`
	Status      string `json:"status"`
	AmountCents int    `json:"amount_cents"`
	Currency    string `json:"currency"`
	DueDate     string `json:"due_date"`
}

var invoiceStatuses = []string{"paid", "open", "overdue"}

// invoicesFor returns 3 to 8 invoices for a valid customer id.
func invoicesFor(customer string) []invoice {
	h := hash64("invoices", customer)
	n := 3 + int(h%6)
	out := make([]invoice, n)
	for i := range out {
		hi := hash64("invoice", customer, fmt.Sprint(i))
		out[i] = invoice{
			ID:          fmt.Sprintf("INV-%s-%03d", customer[1:], i+1),
			CustomerID:  customer,
			Status:      invoiceStatuses[hi%3],
			AmountCents: 1000 + int(hi/3%250_000),
			Currency:    "USD",
			DueDate:     fmt.Sprintf("2026-%02d-%02d", 1+i%12, 1+int(hi/7%28)),
		}
	}
	return out
}

// completionCustomers are the ids offered by completion/complete: 250 of
// them, so an empty prefix exceeds the 100-value cap (COMP-1) and reports
// total and hasMore.
func completionCustomers() []string {
	ids := make([]string, 250)
	for i := range ids {
		ids[i] = fmt.Sprintf("C%04d", 1000+i)
	}
	return ids
}

// summaryCustomers appear in the invoice summary resource.
var summaryCustomers = []string{"C1001", "C1002", "C1003", "C1234", "C2048"}

var weatherConditions = []string{"sunny", "partly cloudy", "cloudy", "light rain", "heavy rain", "fog", "windy", "thunderstorms"}

// knownLocation accepts plausible place names: a letter first, then letters,
// digits, spaces and the punctuation of names like "St. John's, NL".
var knownLocation = lazyRegexp(`^\pL[\pL\pM0-9 .,'()-]*$`)

// fakeWeather returns the weather for a location, or ok=false when the
// location is blank or not a plausible place name.
func fakeWeather(location, units string) (temp float64, conditions string, ok bool) {
	norm := strings.ToLower(strings.Join(strings.Fields(location), " "))
	if norm == "" || utf8.RuneCountInString(norm) > 100 || !knownLocation().MatchString(norm) {
		return 0, "", false
	}
	h := hash64("weather", norm)
	celsius := float64(int(h%46) - 10) // -10..35 °C
	conditions = weatherConditions[h/46%uint64(len(weatherConditions))]
	if celsius <= 0 && strings.Contains(conditions, "rain") {
		conditions = "snow"
	}
	if units == "fahrenheit" {
		return math.Round(celsius*9/5 + 32), conditions, true
	}
	return celsius, conditions, true
}
