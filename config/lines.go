package config

import (
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// nodeIndex maps the field paths of a YAML document ("tenants[0].name") to
// the lines they are on, so that problems can name both.
type nodeIndex struct {
	lines map[string]int
	order []string // paths in document order
}

// indexNode walks a parsed document.
func indexNode(doc *yaml.Node) *nodeIndex {
	idx := &nodeIndex{lines: map[string]int{}}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		idx.walk("", doc.Content[0])
	}
	return idx
}

func (idx *nodeIndex) add(path string, line int) {
	if _, ok := idx.lines[path]; !ok {
		idx.order = append(idx.order, path)
	}
	idx.lines[path] = line
}

func (idx *nodeIndex) walk(path string, n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			idx.add(p, k.Line)
			idx.walk(p, n.Content[i+1])
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			p := path + "[" + strconv.Itoa(i) + "]"
			idx.add(p, e.Line)
			idx.walk(p, e)
		}
	case yaml.AliasNode:
		if n.Alias != nil {
			idx.walk(path, n.Alias)
		}
	}
}

// lineOf returns the line of path, or of its nearest ancestor in the file
// when the key itself is absent; 0 when none is there.
func (idx *nodeIndex) lineOf(path string) int {
	for path != "" {
		if l, ok := idx.lines[path]; ok {
			return l
		}
		cut := strings.LastIndexAny(path, ".[")
		if cut < 0 {
			return 0
		}
		path = path[:cut]
	}
	return 0
}

// typeErrorLine splits one entry of a yaml.TypeError; its line is the one
// of the node that did not decode.
var typeErrorLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// typeProblem turns one entry of a yaml.TypeError ("line 7: cannot
// unmarshal !!str `many` into int") into a Problem naming the field path.
// Unknown keys are not among them: checkKeys finds those.
func (idx *nodeIndex) typeProblem(msg string) Problem {
	m := typeErrorLine.FindStringSubmatch(msg)
	if m == nil {
		return Problem{Reason: msg}
	}
	line, _ := strconv.Atoi(m[1])
	return Problem{Path: idx.deepestAt(line), Line: line, Reason: typeReason(m[2])}
}

// cannotUnmarshal reads yaml.v3's "cannot unmarshal !!str `abc` into int".
var cannotUnmarshal = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (\\S+)$")

// typeReason says in the configuration's words what a value should be.
func typeReason(reason string) string {
	m := cannotUnmarshal.FindStringSubmatch(reason)
	if m == nil {
		return reason
	}
	got := "a " + m[1]
	switch m[1] {
	case "str":
		got = strconv.Quote(m[2])
	case "int", "float", "bool":
		got = m[2]
	case "seq":
		got = "a list"
	case "map":
		got = "a mapping"
	}
	want := "of another type"
	switch t := m[3]; {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		want = "a whole number"
	case strings.HasPrefix(t, "float"):
		want = "a number"
	case t == "bool":
		want = "true or false"
	case t == "string":
		want = "a string"
	case t == "time.Duration":
		want = "a duration such as 10s or 2m"
	case strings.HasPrefix(t, "[]"):
		want = "a list"
	case strings.HasPrefix(t, "map["), strings.Contains(t, "."):
		want = "a mapping"
	}
	return "must be " + want + ", not " + got
}

// deepestAt finds the longest path that starts on line.
func (idx *nodeIndex) deepestAt(line int) string {
	best := ""
	for _, p := range idx.order {
		if idx.lines[p] == line && len(p) > len(best) {
			best = p
		}
	}
	return best
}
