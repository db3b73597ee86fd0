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

func TestLiterals(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`Enter 09/12/2016 as the date and hit submit.`, []string{"09/12/2016"}},
		{`Enter 5:38 PM as the time and press submit.`, []string{"5:38 PM"}},
		{`Enter 12:05 am.`, []string{"12:05 am"}},
		{`Pay $12.50, (not 7) by 3:00.`, []string{"$12.50", "3:00"}},
		{`Click button 2 of the e-mail form.`, nil},
		{`Select -3 with the spinner and hit Submit.`, []string{"-3"}},
		{`Select 7 with the spinner, not -.`, []string{"7"}},
		{`Select - with the spinner.`, nil},
		{`Enter 12 and press Submit.`, []string{"12"}},
		{`Click on 3 items.`, nil},
	} {
		if got := Literals(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Literals(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestIntroducer(t *testing.T) {
	s := `Enter the username "kanesha" and the password "UWH" into the text fields`
	for phrase, want := range map[string]string{"kanesha": "username", "UWH": "password", "Enter": "", "absent": ""} {
		if got := Introducer(s, phrase); got != want {
			t.Errorf("Introducer(%q) = %q, want %q", phrase, got, want)
		}
	}
}

func TestOrdinal(t *testing.T) {
	for s, want := range map[string]int{
		"Focus into the 1st input textbox.": 1,
		"Click the third link.":             3,
		"Enter 10th and 2nd":                10,
		"Click on the button.":              0,
		"":                                  0,
	} {
		if got := Ordinal(LowerWords(s)); got != want {
			t.Errorf("Ordinal(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestSpans(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want []string
	}{
		{`ship it to Ada Lee, 12 Oak Road, Porto 40213.`, 3, []string{
			"ship", "Ada", "Ada Lee", "Lee", "12", "12 Oak", "12 Oak Road", "Oak", "Oak Road", "Road", "Porto", "Porto 40213", "40213"}},
		{`Sign in as ada_x (password pw12) and post`, 2, []string{"Sign", "ada_x", "password", "password pw12", "pw12", "post"}},
		{`change your email to ada@mail.test and phone to 555-0142.`, 2, []string{
			"change", "change your", "your", "your email", "email", "ada@mail.test", "phone", "555-0142"}},
		{`a thread titled "Big plans" saying "hi there", tagged news`, 4, []string{"thread", "thread titled", "titled", "saying", "tagged", "tagged news", "news"}},
		{`Type "unclosed words`, 2, []string{"unclosed", "unclosed words", "words"}},
		{`the , -- ; .`, 2, nil},
		{`anything`, 0, nil},
	} {
		if got := Spans(tc.in, tc.max); !slices.Equal(got, tc.want) {
			t.Errorf("Spans(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

func TestValueIntroducer(t *testing.T) {
	s := `Sign in as ada_x (password pw12), change your email to ada@mail.test and phone to 555-0142.`
	for phrase, want := range map[string]string{"pw12": "password", "ada@mail.test": "email", "555-0142": "phone", "ada_x": "", "Sign": "", "absent": ""} {
		if got := ValueIntroducer(s, phrase); got != want {
			t.Errorf("ValueIntroducer(%q) = %q, want %q", phrase, got, want)
		}
	}
}
