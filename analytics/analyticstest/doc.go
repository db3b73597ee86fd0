// Package analyticstest holds what tests of the analytics store share: a
// small dataset whose saved-query results are known by hand, and helpers to
// give a test its own migrated ClickHouse database. It is imported by tests
// only (analytics, services/dashboard, services/recorder).
package analyticstest
