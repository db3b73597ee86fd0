package tokenizer

// byteRune is GPT-2's map of the 256 byte values to printable runes: the
// printable Latin-1 bytes stand for themselves, the others (controls,
// space, 0x7f-0xa0, 0xad) are shifted past 255 in order. runeByte is its
// inverse.
var byteRune, runeByte = func() ([256]rune, map[rune]byte) {
	var br [256]rune
	rb := make(map[rune]byte, 256)
	printable := func(b int) bool { return b >= '!' && b <= '~' || b >= 0xa1 && b <= 0xac || b >= 0xae && b <= 0xff }
	next := rune(256)
	for b := range 256 {
		if printable(b) {
			br[b] = rune(b)
		} else {
			br[b] = next
			next++
		}
		rb[br[b]] = byte(b)
	}
	return br, rb
}()
