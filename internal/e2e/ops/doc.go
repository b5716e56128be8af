// Package opse2e checks the operators' files of deploy/: the Prometheus alert rules and the
// Grafana dashboard of deploy/observability against a real Prometheus scraping `rankstream
// dev`, and the compose file and Kubernetes manifests against the binary (its commands,
// flags, environment variables, ports and probes).
//
// It has tests only.
package opse2e
