package lm

import (
	"errors"
	"strings"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
)

// ChatML renders messages in the ChatML template (SmolLM2's, Qwen's) up to
// the assistant's turn, the text an in-process model continues. Its special
// markers are tokenized as the special tokens they are.
func ChatML(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
	}
	b.WriteString("<|im_start|>assistant\n")
	return b.String()
}

// CheckChatML reports whether a model's chat template (its GGUF's
// tokenizer.chat_template) is ChatML, the one template ChatML writes.
func CheckChatML(template string) error {
	if !strings.Contains(template, "<|im_start|>") || !strings.Contains(template, "<|im_end|>") {
		return errors.New("the model's chat template is not ChatML (<|im_start|> … <|im_end|>), the one the lm backend writes")
	}
	return nil
}

// SystemIDs and UserIDs are the token form of a decision's chat in
// ChatML: the system turn (the same for every page of action set s and
// answer form a: a model may cache it) and the user turn with the
// assistant's opening, after which the answer follows. The actor's lm
// backend and the learner build them here, so the learner scores an
// answer after exactly the tokens the actor's model read.
func SystemIDs(tok Encoder, s action.Set, a Answer) []int32 {
	return tok.Encode("<|im_start|>system\n"+System(s, a)+"<|im_end|>\n", true)
}

func UserIDs(tok Encoder, obs *eventspb.Observation, s action.Set) []int32 {
	return tok.Encode("<|im_start|>user\n"+User(obs, PromptOptions{Set: s})+"<|im_end|>\n<|im_start|>assistant\n", true)
}

// Encoder is a tokenizer's encoding (tokenizer.Tokenizer).
type Encoder interface {
	Encode(text string, special bool) []int32
}
