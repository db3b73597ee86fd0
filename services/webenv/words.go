package webenv

// Word lists of the generators. They are small on purpose: variety comes from
// combining them, and every entry must be safe in HTML and in an instruction.

var wordsCommon = []string{
	"apple", "river", "stone", "cloud", "maple", "ember", "orbit", "piano", "tiger", "lemon",
	"cedar", "delta", "falcon", "garden", "harbor", "island", "jungle", "kettle", "ladder", "meadow",
	"nickel", "oyster", "pepper", "quartz", "rocket", "saddle", "tunnel", "velvet", "walnut", "yellow",
	"anchor", "bamboo", "canyon", "dragon", "engine", "forest", "galaxy", "hammer", "igloo", "jacket",
	"koala", "lantern", "mirror", "needle", "olive", "parrot", "raven", "silver", "tomato", "violet",
}

var buttonWords = []string{
	"Submit", "Cancel", "Next", "Back", "Save", "Delete", "Open", "Close", "Apply", "Reset",
	"Start", "Stop", "Yes", "No", "Send", "Edit", "Copy", "Share", "Print", "Help",
	"Accept", "Decline", "Retry", "Skip", "Finish", "Undo", "Redo", "Upload", "Search", "Refresh",
}

// colorNames maps a colour's name to its CSS value; names are what the
// instructions say, values are what the page paints.
var colorNames = []string{"red", "green", "blue", "yellow", "purple", "orange", "black", "pink", "brown", "grey"}

var colorValues = map[string]string{
	"red": "#d62828", "green": "#2a9d3f", "blue": "#1f5fd6", "yellow": "#f2d027", "purple": "#7b2cbf",
	"orange": "#f77f00", "black": "#111111", "pink": "#f06aa6", "brown": "#7f4f24", "grey": "#8d8d8d",
}

var shapeNames = []string{"circle", "square", "triangle", "diamond"}

var firstNames = []string{
	"Ada", "Ben", "Cara", "Dana", "Eli", "Fay", "Gus", "Hana", "Ivan", "June",
	"Kai", "Lena", "Milo", "Nora", "Omar", "Pia", "Quinn", "Rosa", "Sam", "Tara",
	"Uma", "Vic", "Wes", "Xena", "Yuri", "Zoe",
}

var lastNames = []string{
	"Adams", "Baker", "Chen", "Diaz", "Evans", "Fischer", "Garcia", "Hughes", "Ito", "Jensen",
	"Khan", "Lopez", "Moreau", "Novak", "Okafor", "Patel", "Quist", "Reyes", "Silva", "Tanaka",
	"Ueda", "Varga", "Weber", "Xu", "Young", "Zhang",
}

var cities = []string{
	"Lisbon", "Oslo", "Denver", "Kyoto", "Austin", "Dublin", "Porto", "Quito", "Tallinn", "Perth",
	"Malmo", "Leeds", "Turin", "Ghent", "Bergen", "Cusco",
}

var streets = []string{"Oak", "Pine", "Elm", "Birch", "Lake", "Hill", "Park", "Mill", "Bay", "Rose"}

var streetKinds = []string{"Street", "Road", "Avenue", "Lane"}

var monthNames = []string{
	"January", "February", "March", "April", "May", "June",
	"July", "August", "September", "October", "November", "December",
}

var departments = []string{"Engineering", "Sales", "Finance", "Legal", "Support", "Design", "Research", "Marketing"}

var jobTitles = []string{"Analyst", "Engineer", "Designer", "Specialist", "Coordinator", "Consultant", "Associate", "Advisor"}
