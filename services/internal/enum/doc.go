// Package enum parses the project's string-valued settings (splits, suites,
// tiers, modes, algorithms, formats): one parser and one error form, "want
// a, b or c", listed from the values themselves, so that a value added to a
// setting is accepted and named in its error without a hand-written copy
// of the list. It imports only the standard library, so the leaves
// (catalog, config) can use it.
package enum
