// Package casstore is a content-addressed store of blobs on a file system:
// <dir>/<hex sha256>. Events carry the hash only (a claim check), so a
// large payload (a full-resolution screenshot, a language model's hidden
// states) stays out of Kafka and ClickHouse while every consumer that
// shares the directory can read it back and check it.
package casstore
