// Package otelexport sends a run's spans to an OpenTelemetry collector
// over OTLP/HTTP, when the user names one: a span for the run, one trace
// per case run holding its model calls, tool calls and MCP requests, and
// for MCP requests made outside a case (Layer 0), one trace per client
// trace. Spans are built after the run from what package telemetry
// recorded, so the OpenTelemetry SDK stays out of every measured path.
//
//	cfg, ok := otelexport.FromEnv(os.LookupEnv) // or Config{Endpoint: "http://collector:4318"}
//	if ok {
//		exp, err := otelexport.New(ctx, cfg)
//		err = otelexport.Export(ctx, exp, rep, rec.Events())
//		err = exp.Shutdown(ctx)
//	}
//
// An MCP request's span has the span id the request carried in its
// traceparent, so the server's own spans, parented on that traceparent,
// land inside the harness's trace.
package otelexport

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Config says where spans go. Only OTLP over HTTP (protobuf) is spoken:
// no gRPC, so the binary carries no gRPC client (docs/telemetry.md has
// the cost in size).
type Config struct {
	// Endpoint is the collector's URL, e.g. http://localhost:4318: a URL
	// without a path gets /v1/traces, one with a path is used as it is
	// (a collector behind a proxy path).
	Endpoint string
	// Headers are sent with every export (e.g. an API key): never logged.
	Headers map[string]string
	// Timeout bounds one export request (default 10s); retries stop after
	// three times that.
	Timeout time.Duration
}

// Standard OpenTelemetry environment variables FromEnv reads.
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" // a full URL, path included
	EnvHeaders        = "OTEL_EXPORTER_OTLP_HEADERS"
	EnvTracesHeaders  = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
)

// FromEnv reads the standard variables: ok is false when neither endpoint
// is set, and then nothing is exported.
func FromEnv(lookup func(string) (string, bool)) (cfg Config, ok bool, err error) {
	// The traces variable wins (OTLP exporter spec). Both are read as
	// Config.Endpoint: a bare host gets /v1/traces, a path is kept.
	if v, set := lookup(EnvTracesEndpoint); set && strings.TrimSpace(v) != "" {
		cfg.Endpoint = strings.TrimSpace(v)
	} else if v, set := lookup(EnvEndpoint); set && strings.TrimSpace(v) != "" {
		cfg.Endpoint = strings.TrimSpace(v)
	} else {
		return Config{}, false, nil
	}
	for _, name := range []string{EnvHeaders, EnvTracesHeaders} {
		if v, set := lookup(name); set && v != "" {
			h, herr := parseHeaders(v)
			if herr != nil {
				return Config{}, false, fmt.Errorf("%s: %w", name, herr)
			}
			if cfg.Headers == nil {
				cfg.Headers = map[string]string{}
			}
			for k, val := range h {
				cfg.Headers[k] = val
			}
		}
	}
	return cfg, true, nil
}

// parseHeaders reads key=value pairs separated by commas, values
// percent-encoded (the OTLP exporter spec's format).
func parseHeaders(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			// The value may be a secret: name the position, not the text.
			return nil, errors.New("a header is not key=value (write k1=v1,k2=v2)")
		}
		val, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("the value of header %s is not percent-encoded correctly", k)
		}
		out[k] = val
	}
	return out, nil
}

// endpointURL is the URL spans are posted to.
func (c Config) endpointURL() (string, error) {
	u, err := url.Parse(strings.TrimSpace(c.Endpoint))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("otelexport: endpoint %q is not an http(s) URL like http://localhost:4318", c.Endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// New returns an OTLP/HTTP span exporter for cfg. It connects lazily: an
// unreachable collector shows as an error from Export, not here.
func New(ctx context.Context, cfg Config) (sdktrace.SpanExporter, error) {
	endpoint, err := cfg.endpointURL()
	if err != nil {
		return nil, err
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	opts := []otlptracehttp.Option{
		otlptracehttp.WithEndpointURL(endpoint), // http:// implies no TLS
		otlptracehttp.WithTimeout(timeout),
		// A collector that is down must not hold the run for the SDK's
		// default minute of retries.
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 500 * time.Millisecond, MaxInterval: 2 * time.Second, MaxElapsedTime: 3 * timeout}),
	}
	if len(cfg.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(cfg.Headers))
	}
	return otlptracehttp.New(ctx, opts...)
}
