// Package frame is the one place a page's pixels are decoded, checked and
// area-resized between the browser and the network. Three sizes of one page
// exist, each with its own word:
//
//   - the screenshot: Chromium's PNG of the viewport at full resolution (the
//     settler compares two of them; the actor's frame store keeps them);
//   - the wire frame: the screenshot area-resized to a longer side of at most
//     128 pixels (actor.WithFrameMaxSide, never up) and compressed (JPEG of
//     quality 80 by default, or PNG), published in Observation.frame.
//     Element boxes and action points are in wire-frame pixels;
//   - the thumbnail: the wire frame area-resized to the network's 3×32×32
//     model input (Architecture.FrameHeight×FrameWidth, values
//     pixel/255 − 0.5), which the featurizer computes in the actor and
//     again in the learner.
//
// Why: the decoding, the size guard and the area resize were written three
// times (the actor's encoder, the settler, the featurizer), with a guard in
// one of them only, and "model resolution" named the wire frame although
// the network sees the thumbnail. Decode checks the declared size before it
// allocates; Resize and Thumbnail share one cell rule (areaCells), so the
// wire frame and the thumbnail average the same way. Decoded images are
// read, never written, so a caller may hand one on: the settler gives the
// screenshot it compared to the actor's encoder. The actor's featurizer
// still decodes the JPEG wire frame it made, since the learner sees only
// those bytes and a JPEG does not decode to the pixels it was made from.
package frame
