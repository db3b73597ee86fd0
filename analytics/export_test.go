package analytics

// MigrateUpTo is Migrate stopped after a version, for tests of a migration
// on a database that predates it.
var MigrateUpTo = migrate
