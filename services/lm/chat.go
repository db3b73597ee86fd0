package lm

import (
	"errors"
	"strings"
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
