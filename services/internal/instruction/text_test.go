package instruction

import (
	"slices"
	"testing"
)

func TestQuotedPhrases(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`Select "a b", “c” and "" then "d`, []string{"a b", "c"}},
		{`Enter the username "kanesha" and the password "UWH" into the text fields`, []string{"kanesha", "UWH"}},
		{`Click the button.`, nil},
		{`"  padded  "`, []string{"padded"}},
	} {
		if got := QuotedPhrases(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("QuotedPhrases(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
