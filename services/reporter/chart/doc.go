// Package chart draws the line charts of the run and bench reports (series
// over x, dashed reference lines, a legend) to PNG through gonum/plot, the
// plotting library of the Go numeric ecosystem. Its small API (Chart,
// Series, HLine) keeps the reports independent of the library: a report
// says what to draw, this package how.
//
// Bad data is an error, never a panic or an empty picture: no finite
// point, X and Y of different lengths, a non-finite X, a range too large
// to plot. A NaN or infinite Y breaks a series' line (a gap in a curve
// whose window was not full yet).
package chart
