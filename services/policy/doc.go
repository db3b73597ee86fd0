// Package policy owns the policy network of AsyncWebRL, defined once: its
// architecture, the featurizer that turns an eventspb.Observation into the
// network's inputs, the parameters (named float32 tensors with a seeded
// init), the ONNX writer and reader (hand-encoded protobuf, no onnx Go
// dependency), inference on ONNX Runtime with an in-process batching server,
// and action sampling with the log-prob definition that actor and learner
// share. The learner's gotch module (services/learner/model.go) is the
// training twin of the graph written here; a parity test holds the two to
// 1e-4, so any change to the graph must be made to both.
//
// # Architecture (DefaultArchitecture, ~260k parameters)
//
// Shapes use B batch, T=32 instruction words, E=32 elements, Lt=8 words per
// element, K=64 text candidates, Lc=4 words per candidate, A action types
// (default 14: NOOP CLICK FILL SELECT_OPTION SCROLL PRESS GO_BACK
// SEND_MSG_TO_USER MOUSE_CLICK DBLCLICK HOVER MOUSE_DRAG_AND_DROP
// MOUSE_MOVE KEYBOARD_TYPE; GOTO is never chosen, nor DRAG_AND_DROP, which a mouse drag
// between two points covers), D=32 embedding, H=64 hidden, F=40 element,
// Fc=18 candidate and P=3 pair features (names in Architecture JSON), G=256
// cells of the point head (the 16x16 conv map) and S²=16 sub-cells.
//
//	inputs                          ops
//	frame [B,3,64,64]               Conv 4x4/2 pad 1 (8ch) → Relu → Conv 4x4/2 (16ch) → Relu = fmap [B,16,16,16]
//	                                → Reshape [B,4096] → MatMul+Add → Relu = vis [B,32]
//	instr_tokens [B,T] int64,       Gather(embed [2048,D]) · weights → ReduceSum = inst [B,D]
//	instr_weights [B,T]             (weights are 1/n on the n words: a masked mean)
//	                                ctx = Relu(Linear(Concat(inst, vis)))           [B,H]
//	elem_feats [B,E,F],             elEmb = bag of words of the element text        [B,E,D]
//	elem_tokens/_tok_weights        e1 = Relu(Linear(Concat(feats, elEmb, elEmb⊙inst)))
//	                                e2 = Relu(e1·W + ctx·W' + b)                    [B,E,H]
//	elem_weights [B,E]              pooled = Σ_e w_e·e2_e; glob = Relu(Linear(Concat(ctx, pooled)))
//	type_mask [B,A]                 type_logits = Linear(glob) + (mask·1e9 - 1e9)    [B,A]
//	elem_type_mask [B,A,E]          elem_logits = Transpose(Linear_A(e2)) + mask     [B,A,E]
//	cand_feats [B,K,Fc], cand_...   c2 = Relu(Linear(...) + glob·W + b)              [B,K,H]
//	cand_mask [B,R,K]               rows = Concat(Linear(e2), Linear(glob), Linear_k(glob)) [B,R,H], R = E+2
//	pair_feats [B,R,K,P]            pair = pair_feats·pair_w [P,1]                  [B,R,K]
//	                                cand_logits = rows·c2ᵀ + Linear_1(c2) + pair + mask [B,R,K]
//	                                value = Linear(glob)                              [B,1]
//	cell_elems [B,G,E]              cells = Transpose(Reshape(fmap, [B,16,G]))        [B,G,16]
//	                                ch = Relu(cells·W + cellpos + cell_elems·(e2·W') + glob·W'' + b) [B,G,Hp=32]
//	                                point_logits = Transpose(Linear_{A+1}(ch))        [B,A+1,G]
//	                                point_offsets = Linear_{S²}(ch)                   [B,G,S²]
//
// Only Conv, Relu, MatMul, Add, Mul, Gather, ReduceSum, Reshape, Concat,
// Transpose, Constant and Identity appear (opset 17, IR 8); masks are
// additive (masked logits sit near -1e9), there is no Softmax in the graph.
//
// # Features (Architecture.Featurize; pure Go, deterministic)
//
// The wire frame (PNG or JPEG, 128 pixels on its longer side) is
// area-averaged to the 64x64 thumbnail (services/internal/frame) and scaled
// to pixel/255-0.5; no frame gives zeros. Words are runs of letters and digits,
// lowercased and hashed (FNV-1a 32) into buckets 1..vocab-1 (0 pads). At
// most E elements are kept, those intersecting the frame first, each group
// in document order. Per element: box / frame size, in-frame flag, role
// one-hot (button, link, textbox, checkbox, radio, select, label,
// clickable, other), lexical matches against the instruction (fraction of
// its words in the instruction, best coverage of a quoted phrase, exact
// match of a quoted phrase, text as a run of the instruction, quoted phrase
// inside the text), state (Element's checked, focused, has value, value
// equals a quoted phrase, disabled), mean RGB of its box in the frame, its
// position in the list, and, the same on every element, whether typing is
// done (every quoted value is in some field; every text field holds one;
// a quoted phrase that is a button's or link's whole text is no value)
// and whether choosing is (every select, checkbox and radio the instruction
// names is chosen, no other box ticked).
// Text candidates are the text head's copy mechanism: every text an action
// types is a span copied from what the policy sees. In order, deduplicated
// case-insensitively, at most K (the memory goes first when K runs out):
// the quoted phrases (and literals: a date, a time); the instruction's
// unquoted spans (instruction.Spans: runs of up to 3 whitespace tokens with
// no stopword and no clause mark, each token whole, so "Ada Lee", "ada_x",
// "ada@mail.test", "12 Oak Road" are one candidate each); its words; the
// page: each kept element's text, value and a select's options, in the
// elements' order (copy-paste tasks, options the instruction names
// unquoted), then the spans of Observation.page_text (the page's visible
// text lines: a code in a <b>, a table cell); last the spans of the
// earlier pages' text in Observation.memory, newest page first (a phone
// number read two pages ago). Features: quoted, single word, position,
// length, equals/inside an element's text, equals an element's value,
// follows a typing verb, stopword, has digit, from the page, a run of the
// instruction, one of a select's options, a span, capitalised, inner
// punctuation (an email, a username), from the memory, typed by an
// earlier step. Per (element, candidate) pair (P=3; row E, the
// element-free row, is zero): the word that introduces a value is in the
// element's text or hint (its field: `the password "UWH"` → the field
// labelled Password; for a span the word before it, or the one before a
// stopword: `email to ada@mail.test` → Email), the element's value equals
// the candidate, the candidate is one of the element's options; each is 4
// when it holds (pairOn: one learnt scalar per column must move the logit
// far enough).
// Per cell of the point head (cell_elems): the innermost kept element whose
// box holds the cell's centre, as a click there would hit.
// Masks: FILL may target text boxes only, SELECT_OPTION selects only, other
// element types any element; a type is masked when it has no eligible
// element or (text types) no candidate, a point type when the observation
// has no frame; NOOP is always allowed.
//
// # Actions and the log-prob (shared with the learner)
//
// An action is a Choice of head indices: Type (index into
// Architecture.ActionTypes), Element (row of elem_logits[Type]) when the
// type uses an element, and Candidate when the type uses text, as the
// action table says (services/internal/action: Row.Element for CLICK, FILL,
// SELECT_OPTION, SCROLL, PRESS; Row.Text for FILL, SELECT_OPTION, PRESS,
// SEND_MSG_TO_USER, KEYBOARD_TYPE), read from cand_logits row TextRow: the key row E+1
// for a press (its key, one of PressKeys: the only candidates unmasked
// there), the Element's row for the other element types, else E.
// The joint log-prob recorded as Action.log_prob and recomputed by the
// learner for the PPO ratio is, with each term a log-softmax over the masked
// logits of one head:
//
//	log π(a|s) = log softmax(type_logits)[Type]
//	           + [uses element] · log softmax(elem_logits[Type])[Element]
//	           + [uses text]    · log softmax(cand_logits[TextRow])[Candidate]
//	           + [uses a point] · ( log softmax(point_logits[Type])[cell(Point)]
//	                              + log softmax(point_offsets[cell(Point)])[sub(Point)] )
//	           + [uses a release point] · (the same of ToPoint on row A)
//
// A point is a position p = cell·S² + sub-cell of a 64x64 grid over the
// wire frame (the thumbnail's stretch of the whole frame): the policy acts
// at the sub-cell's centre, and a recorded point maps to the position that
// holds it (Architecture.PointIndex, PointAt). The action table says which
// types take a point (Row.Point: MOUSE_CLICK, MOUSE_MOVE, a drag's press)
// and a release point (Row.ToPoint: the drag's release, row A).
//
// Entropy is the entropy of that factorised distribution, each point weighed
// by PointEntropyScale (see
// Architecture.Entropy). Fields of the built eventspb.Action: bid; text and
// text_token (= Candidate) for text types; key "Enter" for PRESS; SCROLL
// also sets x/y to the element's centre (a record: the env turns the
// wheel at the element, so a list scrolls under it, else the page) and
// delta_y to half the frame height; raw in
// BrowserGym form (action.Format). ChoiceOf maps a recorded (or
// demonstrated) action back: bid → element, text_token (or the text) →
// candidate; anything else, or a choice the masks forbid, is
// ErrNotRepresentable.
//
// # Runtime
//
// ONNX Runtime is loaded once per process from
// $ASYNCWEBRL_ONNXRUNTIME_LIB, else .run/lib/libonnxruntime.so.1 found by
// walking up to the repository root. Server batches Submit calls from all
// executors (max batch, max wait), swaps weights between batches and stamps
// every Output with the version that computed it.
//
// # Export
//
// WriteNPZ writes a Batch's inputs (named as the graph's) as a NumPy .npz,
// for `asyncwebrl policy features`: analytics/python/policy_check.py runs the
// same ONNX model on them in Python's onnxruntime.
package policy
