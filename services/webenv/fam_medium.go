package webenv

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The medium tier: 4–6 facts — forms with validation, tabs, dropdowns, a
// date, an inbox, settings, a wizard, and two small multi-page sites
// (fam_medium_sites.go).

func init() {
	register("login-form", genLoginForm)
	register("signup-form", genSignupForm)
	register("tabs", genTabs)
	register("dropdowns", genDropdowns)
	register("date-picker", genDatePicker)
	register("email-reply", genEmailReply)
	register("settings-toggles", genSettingsToggles)
	register("wizard-form", genWizardForm)
}

// field writes a labelled input; the site's variant puts the label above,
// beside, or as a placeholder only.
func field(b *hb, g *gen, label, key, typ string) {
	switch g.site.Variant {
	case 1:
		b.f(`<div class="row"><input type="%s" data-k="%s" name="%s" placeholder="%s" aria-label="%s" style="width:160px"></div>`, typ, esc(key), esc(key), esc(label), esc(label))
	case 2:
		b.f(`<div class="row"><label>%s: <input type="%s" data-k="%s" name="%s" style="width:120px"></label></div>`, esc(label), typ, esc(key), esc(key))
	default:
		b.f(`<div class="row"><label>%s<br><input type="%s" data-k="%s" name="%s" style="width:160px"></label></div>`, esc(label), typ, esc(key), esc(key))
	}
	b.f(`<div class="err" data-err="%s"></div>`, esc(key))
}

// selectField writes a labelled select with a blank first option.
func selectField(b *hb, label, key string, opts []string) {
	b.f(`<div class="row"><label>%s <select data-k="%s" name="%s"><option value="">Choose…</option>`, esc(label), esc(key), esc(key))
	for _, o := range opts {
		b.f(`<option value="%s">%s</option>`, esc(o), esc(o))
	}
	b.f(`</select></label></div><div class="err" data-err="%s"></div>`, esc(key))
}

func genLoginForm(g *gen) {
	user := strings.ToLower(g.Pick(firstNames)) + g.Digits(2)
	pass := g.Word(2) + g.Digits(2)
	want, initial := g.Chance(0.5), g.Chance(0.5)
	state := map[bool]string{true: "ticked", false: "unticked"}
	g.instr(`Log in as "%s" with the password "%s", with "Remember me" %s.`, user, pass, state[want])
	login := []string{"Log in", "Sign in", "Enter", "Continue"}[g.site.Variant]
	var b hb
	b.f(`<div style="margin-top:%dpx"><b>Account</b>`, g.Range(0, 16))
	field(&b, g, "Username", "user", "text")
	field(&b, g, "Password", "pass", "password")
	checked := ""
	if initial {
		checked = " checked"
	}
	b.f(`<div class="row"><label><input type="checkbox" data-k="remember"%s> Remember me</label></div>`, checked)
	b.f(`<button data-k="login">%s</button><div class="err" data-err="login"></div></div>`, esc(login))
	g.p.HTML = b.String()
	g.p.Init = map[string]string{"remember": map[bool]string{true: "1", false: "0"}[initial]}
	g.endOn("login")
	g.p.Validate = func(st *State) map[string]string {
		if strings.TrimSpace(st.Values["user"]) == "" || st.Values["pass"] == "" {
			return map[string]string{"login": "Enter a username and a password."}
		}
		return nil
	}
	g.fact(factEq("username is "+user, "credentials", "user", user, false))
	g.fact(factEq("password is "+pass, "credentials", "pass", pass, false))
	g.fact(factChecked(`"Remember me" is `+state[want], "options", "remember", want))
	g.fact(factEnded("logged in", "submit", "login", ""))
	g.plan("fill", "input"+sel("data-k", "user"), user)
	g.plan("fill", "input"+sel("data-k", "pass"), pass)
	if want != initial {
		g.plan("click", "input"+sel("data-k", "remember"), "")
	}
	g.plan("click", "button"+sel("data-k", "login"), "")
}

var emailRE = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[a-z]{2,}$`)

var plans = []string{"Free", "Basic", "Pro", "Team", "Enterprise"}

func genSignupForm(g *gen) {
	first, last := g.Pick(firstNames), g.Pick(lastNames)
	name := first + " " + last
	email := strings.ToLower(first+"."+last) + "@" + g.Pick([]string{"mail.test", "example.org", "post.test"})
	age := g.Range(18, 79)
	plan := g.Pick(plans)
	g.instr(`Sign up as %s, email %s, age %d, on the %s plan.`, name, email, age, plan)
	var b hb
	b.f(`<div style="margin-top:%dpx"><b>Create an account</b>`, g.Range(0, 10))
	order := g.Perm(4)
	for _, i := range order {
		switch i {
		case 0:
			field(&b, g, "Full name", "name", "text")
		case 1:
			field(&b, g, []string{"Email", "E-mail", "Email address", "Mail"}[g.site.Variant], "email", "text")
		case 2:
			field(&b, g, "Age", "age", "text")
		case 3:
			selectField(&b, "Plan", "plan", plans)
		}
	}
	b.f(`<button data-k="submit">%s</button></div>`, esc(g.site.SubmitLabel))
	g.p.HTML = b.String()
	g.endOn("submit")
	g.p.Validate = func(st *State) map[string]string {
		errs := map[string]string{}
		if strings.TrimSpace(st.Values["name"]) == "" {
			errs["name"] = "Name is required."
		}
		if !emailRE.MatchString(strings.TrimSpace(st.Values["email"])) {
			errs["email"] = "Enter a valid email."
		}
		if a, err := strconv.Atoi(strings.TrimSpace(st.Values["age"])); err != nil || a < 18 || a > 120 {
			errs["age"] = "Age must be a number from 18 to 120."
		}
		if st.Values["plan"] == "" {
			errs["plan"] = "Choose a plan."
		}
		if len(errs) == 0 {
			return nil
		}
		return errs
	}
	g.fact(factEq("name is "+name, "fields", "name", name, true))
	g.fact(factEq("email is "+email, "fields", "email", email, true))
	g.fact(factEq("age is "+itoa(age), "fields", "age", itoa(age), false))
	g.fact(factEq("plan is "+plan, "fields", "plan", plan, false))
	g.fact(factEnded("submitted a valid form", "submit", "submit", ""))
	g.plan("fill", "input"+sel("data-k", "name"), name)
	g.plan("fill", "input"+sel("data-k", "email"), email)
	g.plan("fill", "input"+sel("data-k", "age"), itoa(age))
	g.plan("select", "select"+sel("data-k", "plan"), plan)
	g.plan("click", "button"+sel("data-k", "submit"), "")
}

var tabNames = []string{"General", "Profile", "Privacy", "Billing", "Alerts", "Advanced"}
var tabFields = []string{"Nickname", "Website", "Company", "Phone", "Motto", "Room"}
var tabBoxes = []string{"Public profile", "Weekly digest", "Beta features", "Show email", "Compact view", "Auto-renew"}

func genTabs(g *gen) {
	n := g.Range(3, 4)
	tabs := g.Sample(tabNames, n)
	fields := g.Sample(tabFields, n)
	boxes := g.Sample(tabBoxes, n)
	t := g.Range(1, n-1) // never the tab that is open at first
	value := title(g.Word(2))
	g.instr(`In the "%s" tab, set %s to "%s", tick "%s" and click %s.`, tabs[t], fields[t], value, boxes[t], g.site.SaveLabel)
	var b hb
	b.f(`<div class="tabbar" style="margin-top:%dpx">`, g.Range(0, 10))
	for i, tab := range tabs {
		active := ""
		if i == 0 {
			active = ` class="active"`
		}
		b.f(`<button data-show="pane-%d" data-tabs="t"%s>%s</button> `, i, active, esc(tab))
	}
	b.f(`</div>`)
	for i := range tabs {
		hidden := " hidden"
		if i == 0 {
			hidden = ""
		}
		b.f(`<div id="pane-%d" data-pane="p" class="card"%s>`, i, hidden)
		field(&b, g, fields[i], "field:"+itoa(i), "text")
		b.f(`<div class="row"><label><input type="checkbox" data-k="box:%d"> %s</label></div></div>`, i, esc(boxes[i]))
	}
	b.f(`<button data-k="save">%s</button>`, esc(g.site.SaveLabel))
	g.p.HTML = b.String()
	g.endOn("save")
	ti := itoa(t)
	g.fact(factEq(fields[t]+" is "+value, "tab", "field:"+ti, value, false))
	g.fact(factChecked(`"`+boxes[t]+`" is ticked`, "tab", "box:"+ti, true))
	g.fact(Fact{Name: "the other tabs are unchanged", Group: "tab", Check: func(st *State) bool {
		for i := range tabs {
			if i != t && (strings.TrimSpace(st.Values["field:"+itoa(i)]) != "" || st.Values["box:"+itoa(i)] == "1") {
				return false
			}
		}
		return true
	}})
	g.fact(factEnded("saved", "submit", "save", ""))
	g.plan("click", "button"+sel("data-show", "pane-"+ti), "")
	g.plan("fill", "input"+sel("data-k", "field:"+ti), value)
	g.plan("click", "input"+sel("data-k", "box:"+ti), "")
	g.plan("click", "button"+sel("data-k", "save"), "")
}

var sizes = []string{"XS", "S", "M", "L", "XL"}
var products = []string{"shirt", "hoodie", "jacket", "cap", "scarf", "sweater"}

func genDropdowns(g *gen) {
	size := g.Pick(sizes)
	cols := g.Sample(colorNames, 5)
	col := g.Pick(cols)
	qty := g.Range(1, 5)
	prod := g.Pick(products)
	g.instr(`Order a %s %s in size %s, quantity %d: choose them and click Add.`, col, prod, size, qty)
	var b hb
	b.f(`<div style="margin-top:%dpx"><b>%s</b>`, g.Range(0, 12), esc(title(prod)))
	order := g.Perm(3)
	for _, i := range order {
		switch i {
		case 0:
			selectField(&b, "Size", "size", sizes)
		case 1:
			selectField(&b, "Colour", "colour", cols)
		case 2:
			selectField(&b, "Quantity", "qty", []string{"1", "2", "3", "4", "5"})
		}
	}
	b.f(`<button data-k="add">Add</button></div>`)
	g.p.HTML = b.String()
	g.endOn("add")
	g.fact(factEq("size is "+size, "options", "size", size, false))
	g.fact(factEq("colour is "+col, "options", "colour", col, false))
	g.fact(factEq("quantity is "+itoa(qty), "options", "qty", itoa(qty), false))
	g.fact(factEnded("added", "submit", "add", ""))
	g.plan("select", "select"+sel("data-k", "size"), size)
	g.plan("select", "select"+sel("data-k", "colour"), col)
	g.plan("select", "select"+sel("data-k", "qty"), itoa(qty))
	g.plan("click", "button"+sel("data-k", "add"), "")
}

func daysIn(month, year int) int {
	return time.Date(year, time.Month(month+1), 0, 0, 0, 0, 0, time.UTC).Day()
}

func genDatePicker(g *gen) {
	y0 := 2018 + g.Intn(6)
	years := []string{}
	for y := y0; y < y0+6; y++ {
		years = append(years, itoa(y))
	}
	year := y0 + g.Intn(6)
	month := g.Range(1, 12)
	day := g.Range(1, daysIn(month, year))
	mname := monthNames[month-1]
	g.instr(`Set the date to %d %s %d and click %s.`, day, mname, year, g.site.SubmitLabel)
	days := make([]string, 31)
	for i := range days {
		days[i] = itoa(i + 1)
	}
	var b hb
	b.f(`<div style="margin-top:%dpx"><b>%s</b>`, g.Range(0, 12), esc(g.Pick([]string{"Appointment", "Delivery date", "Start date", "Booking"})))
	if g.site.Variant%2 == 1 { // month first
		selectField(&b, "Month", "month", monthNames)
		selectField(&b, "Day", "day", days)
	} else {
		selectField(&b, "Day", "day", days)
		selectField(&b, "Month", "month", monthNames)
	}
	selectField(&b, "Year", "year", years)
	b.f(`<div class="err" data-err="date"></div><button data-k="submit">%s</button></div>`, esc(g.site.SubmitLabel))
	g.p.HTML = b.String()
	g.endOn("submit")
	g.p.Validate = func(st *State) map[string]string {
		d, err1 := strconv.Atoi(st.Values["day"])
		y, err2 := strconv.Atoi(st.Values["year"])
		m := 0
		for i, n := range monthNames {
			if n == st.Values["month"] {
				m = i + 1
			}
		}
		if err1 != nil || err2 != nil || m == 0 {
			return map[string]string{"date": "Choose a day, a month and a year."}
		}
		if d > daysIn(m, y) {
			return map[string]string{"date": fmt.Sprintf("%s %d has %d days.", monthNames[m-1], y, daysIn(m, y))}
		}
		return nil
	}
	g.fact(factEq("day is "+itoa(day), "date", "day", itoa(day), false))
	g.fact(factEq("month is "+mname, "date", "month", mname, false))
	g.fact(factEq("year is "+itoa(year), "date", "year", itoa(year), false))
	g.fact(factEnded("submitted", "submit", "submit", ""))
	g.plan("select", "select"+sel("data-k", "day"), itoa(day))
	g.plan("select", "select"+sel("data-k", "month"), mname)
	g.plan("select", "select"+sel("data-k", "year"), itoa(year))
	g.plan("click", "button"+sel("data-k", "submit"), "")
}

var replyPhrases = []string{"See you at %s", "Thanks, %s works for me", "I will bring the %s", "Sounds good, %s it is", "Please send the %s"}

func genEmailReply(g *gen) {
	n := g.Range(4, 6)
	type mail struct{ from, subject string }
	used := map[string]bool{}
	var mails []mail
	for len(mails) < n {
		from := g.Pick(firstNames) + " " + g.Pick(lastNames)
		if used[from] {
			continue
		}
		used[from] = true
		mails = append(mails, mail{from, title(g.Pick(wordsCommon)) + " " + g.Pick(wordsCommon)})
	}
	t := g.Intn(n)
	text := fmt.Sprintf(g.Pick(replyPhrases), g.Pick(wordsCommon))
	g.instr(`Reply to the email from %s with the text "%s".`, mails[t].from, text)
	var b hb
	b.f(`<div id="inbox" data-pane="mail"><b>Inbox</b>`)
	for i, m := range mails {
		b.f(`<div class="list-item" role="button" data-show="mail-%d" data-k="open" data-v="%d"><b>%s</b><br><span class="muted">%s</span></div>`, i, i, esc(m.from), esc(m.subject))
	}
	b.f(`</div>`)
	for i, m := range mails {
		b.f(`<div id="mail-%d" data-pane="mail" hidden><div>From: <b>%s</b></div><div>%s</div><p class="muted">%s</p>`, i, esc(m.from), esc(m.subject), esc(strings.Join(g.Sample(wordsCommon, 8), " ")))
		b.f(`<button data-show="inbox">Back</button> <button data-show="reply-%d" data-k="reply" data-v="%d">Reply</button> <button data-k="delete" data-v="%d">Delete</button></div>`, i, i, i)
		b.f(`<div id="reply-%d" data-pane="mail" hidden><div>To: %s</div><textarea data-k="body:%d" rows="3" style="width:200px"></textarea><br><button data-k="send" data-v="%d">Send</button></div>`, i, esc(m.from), i, i)
	}
	g.p.HTML = b.String()
	g.endOn("send", "delete")
	ti := itoa(t)
	g.fact(Fact{Name: "opened the email from " + mails[t].from, Group: "open", Check: func(st *State) bool { return st.Clicked("open", ti) }})
	g.fact(Fact{Name: "clicked Reply on it", Group: "open", Check: func(st *State) bool { return st.Clicked("reply", ti) }})
	g.fact(factEq(`reply says "`+text+`"`, "reply", "body:"+ti, text, false))
	g.fact(factEnded("sent the reply to "+mails[t].from, "reply", "send", ti))
	g.plan("click", sel("data-k", "open")+sel("data-v", ti), "")
	g.plan("click", "button"+sel("data-k", "reply")+sel("data-v", ti), "")
	g.plan("fill", "textarea"+sel("data-k", "body:"+ti), text)
	g.plan("click", "button"+sel("data-k", "send")+sel("data-v", ti), "")
}

var settingNames = []string{"Email alerts", "Dark mode", "Auto-save", "Two-factor login", "Location", "Newsletter", "Sounds", "Sync"}

func genSettingsToggles(g *gen) {
	n := g.Range(4, 6)
	names := g.Sample(settingNames, n)
	on := make([]bool, n)
	for i := range on {
		on[i] = g.Chance(0.5)
	}
	// One setting to turn on (now off) and one to turn off (now on).
	idx := g.Perm(n)
	a, c := idx[0], idx[1]
	on[a], on[c] = false, true
	g.instr(`Turn on "%s", turn off "%s", leave the others and click %s.`, names[a], names[c], g.site.SaveLabel)
	g.p.Init = map[string]string{}
	var b hb
	b.f(`<div style="margin-top:%dpx"><b>Settings</b>`, g.Range(0, 10))
	for i, name := range names {
		checked := ""
		if on[i] {
			checked = " checked"
		}
		g.p.Init["set:"+itoa(i)] = map[bool]string{true: "1", false: "0"}[on[i]]
		b.f(`<label class="switch"><span>%s</span><input type="checkbox" data-k="set:%d"%s></label>`, esc(name), i, checked)
	}
	b.f(`<button data-k="save">%s</button></div>`, esc(g.site.SaveLabel))
	g.p.HTML = b.String()
	g.endOn("save")
	g.fact(factChecked(names[a]+" is on", "toggles", "set:"+itoa(a), true))
	g.fact(factChecked(names[c]+" is off", "toggles", "set:"+itoa(c), false))
	g.fact(Fact{Name: "the other settings are unchanged", Group: "toggles", Check: func(st *State) bool {
		for i := range names {
			if i != a && i != c && (st.Values["set:"+itoa(i)] == "1") != on[i] {
				return false
			}
		}
		return true
	}})
	g.fact(factEnded("saved", "submit", "save", ""))
	g.plan("click", "input"+sel("data-k", "set:"+itoa(a)), "")
	g.plan("click", "input"+sel("data-k", "set:"+itoa(c)), "")
	g.plan("click", "button"+sel("data-k", "save"), "")
}

func genWizardForm(g *gen) {
	name := g.Pick(firstNames) + " " + g.Pick(lastNames)
	depts := g.Sample(departments, 5)
	dept := g.Pick(depts)
	g.instr(`Complete the wizard: name "%s", department "%s", accept the terms, then finish.`, name, dept)
	var b hb
	b.f(`<div id="step-1" data-pane="w" class="card"><b>Step 1 of 3</b>`)
	field(&b, g, "Your name", "name", "text")
	b.f(`<button data-show="step-2" data-k="next" data-v="1">Next</button></div>`)
	b.f(`<div id="step-2" data-pane="w" class="card" hidden><b>Step 2 of 3</b>`)
	selectField(&b, "Department", "dept", depts)
	b.f(`<button data-show="step-1">Back</button> <button data-show="step-3" data-k="next" data-v="2">Next</button></div>`)
	b.f(`<div id="step-3" data-pane="w" class="card" hidden><b>Step 3 of 3</b>`)
	b.f(`<div class="row"><label><input type="checkbox" data-k="terms"> I accept the terms</label></div>`)
	b.f(`<button data-show="step-2">Back</button> <button data-k="finish">Finish</button></div>`)
	g.p.HTML = b.String()
	g.endOn("finish")
	g.fact(factEq("name is "+name, "wizard", "name", name, true))
	g.fact(factEq("department is "+dept, "wizard", "dept", dept, false))
	g.fact(factChecked("accepted the terms", "wizard", "terms", true))
	g.fact(factEnded("finished", "submit", "finish", ""))
	g.plan("fill", "input"+sel("data-k", "name"), name)
	g.plan("click", "button"+sel("data-k", "next")+sel("data-v", "1"), "")
	g.plan("select", "select"+sel("data-k", "dept"), dept)
	g.plan("click", "button"+sel("data-k", "next")+sel("data-v", "2"), "")
	g.plan("click", "input"+sel("data-k", "terms"), "")
	g.plan("click", "button"+sel("data-k", "finish"), "")
}
