// Package config turns flags and environment variables into the one Config
// value every component is built from. Every flag has an environment
// variable (ASYNCWEBRL_ + the flag name upper-cased, dashes as underscores);
// a flag given on the command line wins over its variable.
//
// Secrets (Kafka SASL password, ClickHouse password) are held as Secret,
// whose String, GoString and LogValue forms are redacted, so that a config
// logged at start-up or printed in an error never carries them.
package config
