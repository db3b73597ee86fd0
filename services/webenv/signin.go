package webenv

// The sign-in form two hard sites share (account-update, forum-post): a
// username and a password posted to base/signin, and the oracle's steps
// through it.

// signinForm writes the form under heading (text, escaped here); bad adds
// the line a wrong username or password gets.
func signinForm(b *hb, base, heading string, bad bool) {
	b.f(`<b>%s</b>`, esc(heading))
	if bad {
		b.f(`<div class="err">Wrong username or password.</div>`)
	}
	b.f(`<form method="post" action="%s/signin">`, base)
	b.f(`<div class="row"><label>Username<br><input type="text" name="user" style="width:200px"></label></div>`)
	b.f(`<div class="row"><label>Password<br><input type="password" name="pass" style="width:200px"></label></div>`)
	b.f(`<button type="submit" data-go="signin">Sign in</button></form>`)
}

// planSignin is the oracle's way through the form: fill in user and pass,
// then sign in.
func (g *gen) planSignin(user, pass string) {
	g.plan("fill", "input"+sel("name", "user"), user)
	g.plan("fill", "input"+sel("name", "pass"), pass)
	g.plan("click", "button"+sel("data-go", "signin"), "")
}
