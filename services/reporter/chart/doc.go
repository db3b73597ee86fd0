// Package chart draws simple line charts (series over x, dashed reference
// lines, a legend) to PNG for run reports.
//
// It uses only the standard library: the module has no image/font
// dependency and a report helper is not worth adding one. Text is drawn
// with a built-in 3x5 bitmap font scaled up 2x (3x for the title); it covers
// 0-9 . % - : / ( ) _ ? space and the letters, lowercase letters sharing the
// capital glyphs (a 3x5 cell has no room for distinct ones). Other
// characters are drawn as '?'.
//
// Images are paletted (white, black, grey and 8 series colours), which keeps
// the PNGs small and makes every pixel exactly one known colour, so tests
// can check what was drawn where.
package chart
