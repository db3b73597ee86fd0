package webenv

import (
	"fmt"
	"strings"
)

// The hard tier's forum: sign in, open a category, post a tagged thread.

func init() {
	register("forum-post", genForumPost)
}

var forumCats = []string{"General", "Announcements", "Help", "Off-topic", "Feedback", "Events"}

var forumTags = []string{"question", "idea", "bug", "news", "meta"}

func genForumPost(g *gen) {
	user := strings.ToLower(g.Pick(firstNames)) + "_" + g.Word(1)
	pass := g.Word(2) + g.Digits(3)
	cats := g.Sample(forumCats, g.Range(4, 5))
	cat := g.Pick(cats)
	titleText := title(g.Pick(wordsCommon)) + " " + g.Pick(wordsCommon) + " " + g.Pick([]string{"tips", "plans", "thoughts", "issue", "update"})
	body := fmt.Sprintf(g.Pick(replyPhrases), g.Pick(wordsCommon))
	tag := g.Pick(forumTags)
	g.instr(`Sign in as %s (password %s) and post in %s a thread titled "%s" saying "%s", tagged %s, with "Notify me" ticked.`,
		user, pass, cat, titleText, body, tag)
	threads := map[string][]string{}
	for _, c := range cats {
		for range g.Range(2, 4) {
			threads[c] = append(threads[c], title(g.Pick(wordsCommon))+" "+g.Pick(wordsCommon))
		}
	}
	g.p.Init = map[string]string{"notify": "0"}
	g.fact(Fact{Name: "signed in as " + user, Group: "signin", Check: func(st *State) bool { return st.Site["user"] == user }})
	g.fact(Fact{Name: "posted in " + cat, Group: "post", Check: func(st *State) bool { return st.Site["post_cat"] == cat }})
	g.fact(factEq(`title is "`+titleText+`"`, "post", "title", titleText, false))
	g.fact(factEq(`text is "`+body+`"`, "post", "body", body, false))
	g.fact(factEq("tag is "+tag, "post", "tag", tag, false))
	g.fact(factChecked(`"Notify me" is ticked`, "post", "notify", true))
	g.fact(Fact{Name: "posted the thread", Group: "done", Check: func(st *State) bool { return st.Ended("post", "") }})
	g.plan("click", "a"+sel("data-go", "signin"), "")
	g.planSignin(user, pass)
	g.plan("click", "a"+sel("data-nav", cat), "")
	g.plan("click", "a"+sel("data-go", "new"), "")
	g.plan("fill", "input"+sel("data-k", "title"), titleText)
	g.plan("fill", "textarea"+sel("data-k", "body"), body)
	g.plan("select", "select"+sel("data-k", "tag"), tag)
	g.plan("click", "input"+sel("data-k", "notify"), "")
	g.plan("click", "button"+sel("data-go", "post"), "")

	g.p.Pages = func(req PageRequest) PageResult {
		var b hb
		st := req.State
		b.f(`<div class="nav"><a href="%s/">Forum</a> `, req.Base)
		if u := st.Site["user"]; u != "" {
			b.f(`<span class="muted">signed in as %s</span></div>`, esc(u))
		} else {
			b.f(`<a href="%s/signin" data-go="signin">Sign in</a></div>`, req.Base)
		}
		path := strings.Trim(req.Path, "/")
		parts := strings.Split(path, "/")
		switch {
		case path == "" && req.Method == "GET":
			b.f(`<b>Categories</b><ul>`)
			for _, c := range cats {
				b.f(`<li><a href="%s/c/%s" data-nav="%s">%s</a> <span class="muted">(%d threads)</span></li>`, req.Base, slug(c), esc(c), esc(c), len(threads[c]))
			}
			b.f(`</ul>`)
		case path == "signin" && req.Method == "GET":
			signinForm(&b, req.Base, "Sign in", false)
		case path == "signin" && req.Method == "POST":
			if req.Form.Get("user") == user && req.Form.Get("pass") == pass {
				st.Site["user"] = user
				return PageResult{Redirect: "/"}
			}
			signinForm(&b, req.Base, "Sign in", true)
		case len(parts) == 2 && parts[0] == "c" && req.Method == "GET":
			c, ok := findBySlug(cats, parts[1])
			if !ok {
				return PageResult{NotFound: true}
			}
			b.f(`<b>%s</b> <a href="%s/c/%s/new" data-go="new">New thread</a><ul data-lazy>`, esc(c), req.Base, slug(c))
			for _, t := range threads[c] {
				b.f(`<li>%s</li>`, esc(t))
			}
			b.f(`</ul>`)
		case len(parts) == 3 && parts[0] == "c" && parts[2] == "new" && req.Method == "GET":
			c, ok := findBySlug(cats, parts[1])
			if !ok {
				return PageResult{NotFound: true}
			}
			if st.Site["user"] == "" {
				b.f(`<p>Please <a href="%s/signin" data-go="signin">sign in</a> to post.</p>`, req.Base)
				break
			}
			b.f(`<b>New thread in %s</b><form method="post" action="%s/c/%s/post">`, esc(c), req.Base, slug(c))
			b.f(`<div class="row"><label>Title<br><input type="text" name="title" data-k="title" style="width:240px"></label></div>`)
			b.f(`<div class="row"><label>Text<br><textarea name="body" data-k="body" rows="3" style="width:240px"></textarea></label></div>`)
			b.f(`<div class="row"><label>Tag <select name="tag" data-k="tag"><option value="">Choose…</option>`)
			for _, t := range forumTags {
				b.f(`<option>%s</option>`, t)
			}
			b.f(`</select></label></div><div class="row"><label><input type="checkbox" name="notify" value="1" data-k="notify"> Notify me</label></div>`)
			b.f(`<button type="submit" data-go="post">Post</button></form>`)
		case len(parts) == 3 && parts[0] == "c" && parts[2] == "post" && req.Method == "POST":
			c, ok := findBySlug(cats, parts[1])
			if !ok || st.Site["user"] == "" {
				return PageResult{NotFound: true}
			}
			if strings.TrimSpace(req.Form.Get("title")) == "" || strings.TrimSpace(req.Form.Get("body")) == "" {
				b.f(`<div class="err">A thread needs a title and a text.</div><a href="%s/c/%s/new">Back</a>`, req.Base, slug(c))
				break
			}
			if req.Form.Get("notify") == "" {
				st.Values["notify"] = "0"
			}
			st.Site["post_cat"] = c
			return PageResult{Redirect: "/c/" + slug(c), End: true, EndKey: "post"}
		default:
			return PageResult{NotFound: true}
		}
		return PageResult{HTML: b.String()}
	}
}
