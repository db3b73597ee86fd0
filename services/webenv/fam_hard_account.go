package webenv

import (
	"slices"
	"strings"
)

// The hard tier's account site: sign in, update the profile, save, sign
// out.

func init() {
	register("account-update", genAccountUpdate)
}

var timeZones = []string{"UTC", "Europe/Lisbon", "Europe/Oslo", "America/Denver", "Asia/Tokyo", "Australia/Perth"}

func genAccountUpdate(g *gen) {
	user := strings.ToLower(g.Pick(lastNames)) + g.Digits(2)
	pass := g.Word(2) + g.Digits(2)
	display := g.Pick(firstNames) + " " + g.Pick(lastNames)
	oldEmail := user + "@old.test"
	oldPhone := "555-" + g.Digits(4)
	oldTZ := g.Pick(timeZones)
	newEmail := user + "@" + g.Pick([]string{"mail.test", "post.test", "home.test"})
	newPhone := "555-" + g.Digits(4)
	tzs := slices.DeleteFunc(slices.Clone(timeZones), func(z string) bool { return z == oldTZ })
	newTZ := g.Pick(tzs)
	g.instr(`Sign in as %s (password %s), change your email to %s and phone to %s, set the time zone to %s, save, then sign out.`,
		user, pass, newEmail, newPhone, newTZ)
	g.fact(Fact{Name: "signed in", Group: "signin", Check: func(st *State) bool { return st.Site["signed_in"] != "" }})
	g.fact(Fact{Name: "email is " + newEmail, Group: "profile", Check: func(st *State) bool { return norm(st.Site["email"]) == norm(newEmail) }})
	g.fact(Fact{Name: "phone is " + newPhone, Group: "profile", Check: func(st *State) bool { return norm(st.Site["phone"]) == norm(newPhone) }})
	g.fact(Fact{Name: "time zone is " + newTZ, Group: "profile", Check: func(st *State) bool { return st.Site["tz"] == newTZ }})
	g.fact(Fact{Name: "display name unchanged", Group: "profile", Check: func(st *State) bool {
		return st.Site["display"] == "" || st.Site["display"] == display
	}})
	g.fact(Fact{Name: "saved the profile", Group: "profile", Check: func(st *State) bool { return st.Site["saved"] == "1" }})
	g.fact(Fact{Name: "signed out", Group: "signout", Check: func(st *State) bool { return st.Ended("signout", "") }})
	g.planSignin(user, pass)
	g.plan("click", "a"+sel("data-nav", "profile"), "")
	g.plan("fill", "input"+sel("name", "email"), newEmail)
	g.plan("fill", "input"+sel("name", "phone"), newPhone)
	g.plan("select", "select"+sel("name", "tz"), newTZ)
	g.plan("click", "button"+sel("data-go", "save"), "")
	g.plan("click", "a"+sel("data-go", "signout"), "")

	cur := func(st *State, key, def string) string {
		if v, ok := st.Site[key]; ok {
			return v
		}
		return def
	}
	g.p.Pages = func(req PageRequest) PageResult {
		var b hb
		st := req.State
		in := st.Site["signed_in"] == "1"
		path := strings.Trim(req.Path, "/")
		if in {
			b.f(`<div class="nav"><a href="%s/home">Home</a> <a href="%s/profile" data-nav="profile">Profile</a> <a href="%s/security" data-nav="security">Security</a> <a href="%s/signout" data-go="signout">Sign out</a></div>`,
				req.Base, req.Base, req.Base, req.Base)
		}
		switch {
		case path == "" && req.Method == "GET", path == "signin" && req.Method == "POST":
			bad := req.Method == "POST"
			if bad && req.Form.Get("user") == user && req.Form.Get("pass") == pass {
				st.Site["signed_in"] = "1"
				return PageResult{Redirect: "/home"}
			}
			if in {
				return PageResult{Redirect: "/home"}
			}
			signinForm(&b, req.Base, title(g.site.Name)+" account", bad)
		case !in:
			return PageResult{Redirect: "/"}
		case path == "home":
			b.f(`<b>Welcome, %s</b><p class="muted">%s</p>`, esc(cur(st, "display", display)), esc(pseudoText(user, 10)))
		case path == "security":
			b.f(`<b>Security</b><p class="muted">Two-factor login is off.</p>`)
		case path == "profile" && req.Method == "GET":
			if req.Query.Get("saved") == "1" {
				b.f(`<div class="muted">Saved.</div>`)
			}
			b.f(`<b>Profile</b><form method="post" action="%s/profile">`, req.Base)
			for _, f := range [][3]string{{"Display name", "display", cur(st, "display", display)}, {"Email", "email", cur(st, "email", oldEmail)}, {"Phone", "phone", cur(st, "phone", oldPhone)}} {
				b.f(`<div class="row"><label>%s<br><input type="text" name="%s" data-k="%s" value="%s" style="width:220px"></label></div>`, f[0], f[1], f[1], esc(f[2]))
			}
			b.f(`<div class="row"><label>Time zone <select name="tz" data-k="tz">`)
			for _, z := range timeZones {
				s := ""
				if z == cur(st, "tz", oldTZ) {
					s = " selected"
				}
				b.f(`<option%s>%s</option>`, s, z)
			}
			b.f(`</select></label></div><button type="submit" data-go="save">%s</button></form>`, esc(g.site.SaveLabel))
		case path == "profile" && req.Method == "POST":
			for _, k := range []string{"display", "email", "phone", "tz"} {
				st.Site[k] = truncate(strings.TrimSpace(req.Form.Get(k)), 200)
			}
			st.Site["saved"] = "1"
			return PageResult{Redirect: "/profile?saved=1"}
		case path == "signout":
			st.Site["signed_in"] = "0"
			return PageResult{Redirect: "/", End: true, EndKey: "signout"}
		default:
			return PageResult{NotFound: true}
		}
		return PageResult{HTML: b.String()}
	}
}
