package top

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/run/view"
)

// Source is what top reads and does: a ps view, explain's story of a
// pid, and the reap of one finding (dry-run or not).
type Source interface {
	View(ctx context.Context) (*audit.PSView, error)
	Explain(ctx context.Context, pid int) (string, error)
	End(ctx context.Context, root int, dryRun bool) (*view.Ending, error)
}

// MinInterval is the shortest refresh: a pass reads every process.
const MinInterval = 2 * time.Second

// Options are top's settings.
type Options struct {
	Interval time.Duration
	Sort     string // audit.PSOrder
	Style    audit.Style
}

// New is the top model over src.
func New(src Source, opts Options) *Model {
	if opts.Interval < MinInterval {
		opts.Interval = MinInterval
	}
	if !slices.Contains(audit.PSOrder, opts.Sort) {
		opts.Sort = audit.PSOrder[0]
	}
	return &Model{src: src, opts: opts, collapsed: map[int]bool{}, width: 80, height: 24}
}

// Model is top's state: Bubble Tea's model.
type Model struct {
	src  Source
	opts Options

	view      *audit.PSView
	err       string
	loading   bool
	refreshed time.Time
	crashed   error // a panic in a pass, explain or reap

	rows          []row
	cursor, first int
	collapsed     map[int]bool // session pid → its tree hidden

	searching bool
	search    string

	// overlay is text shown over the list (explain, a plan, an ending)
	// until a key; confirm is the finding root whose dry-run it shows,
	// waiting for "y".
	overlay string
	confirm int
	status  string

	width, height int
}

// row is one line of the list and what its keys act on.
type row struct {
	text string
	pid  int // the process e explains (0: none)
	// root is the finding k ends (0: none — a live session's process);
	// session is the session pid a header row folds.
	root, session int
	live          bool // a process of a live session, not a finding's
}

type (
	viewMsg struct {
		v   *audit.PSView
		err error
	}
	tickMsg    time.Time
	explainMsg struct {
		text string
		err  error
	}
	endMsg struct {
		root   int
		dryRun bool
		e      *view.Ending
		err    error
	}
)

// Init starts the first pass.
func (m *Model) Init() tea.Cmd { return m.fetch() }

func (m *Model) fetch() tea.Cmd {
	if m.loading {
		return nil
	}
	m.loading = true
	src := m.src
	return guard(func() tea.Msg {
		v, err := src.View(context.Background())
		return viewMsg{v, err}
	})
}

// crashMsg is a panic in a pass, explain or reap: a bug. top ends on
// it through its ordinary quit, which gives the terminal back after its
// input reader has stopped (Bubble Tea's own panic path does not wait
// for the reader, and leaves it running past the program's end).
type crashMsg struct{ err error }

// guard runs a command's work, turning its panic into a crashMsg that
// carries the panic and its stack.
func guard(f func() tea.Msg) tea.Cmd {
	return func() (msg tea.Msg) {
		defer func() {
			if p := recover(); p != nil {
				msg = crashMsg{fmt.Errorf("%w: %v\n%s", ErrCrashed, p, debug.Stack())}
			}
		}()
		return f()
	}
}

// ErrCrashed is what Run returns when a pass, explain or reap panicked.
var ErrCrashed = errors.New("top: a bug ended it")

func (m *Model) tick() tea.Cmd {
	return tea.Tick(m.opts.Interval, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Update takes a message: a pass's view, the tick, a key, the window's
// size, explain's or a reap's answer.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		// A terminal with no size (0×0: a new pseudo-terminal, some
		// serial lines) is drawn as 80×24.
		if msg.Width > 0 && msg.Height > 0 {
			m.width, m.height = msg.Width, msg.Height
		}
	case viewMsg:
		m.loading = false
		if msg.err != nil {
			m.err = msg.err.Error()
		} else {
			m.err, m.view, m.refreshed = "", msg.v, time.Now()
			m.view.Sort(m.opts.Sort)
			m.layout()
		}
		return m, m.tick()
	case tickMsg:
		return m, m.fetch()
	case explainMsg:
		m.overlay = msg.text
		if msg.err != nil {
			m.overlay = "explain: " + msg.err.Error()
		}
	case endMsg:
		return m, m.ended(msg)
	case crashMsg:
		m.crashed = msg.err
		return m, tea.Quit
	case doneMsg:
		return m, tea.Quit
	case tea.KeyPressMsg:
		return m, m.key(msg)
	}
	return m, nil
}

// ended shows a reap's answer: a dry-run that would signal asks for a
// "y"; anything else is shown as it is.
func (m *Model) ended(msg endMsg) tea.Cmd {
	m.status = ""
	switch {
	case msg.err != nil:
		m.overlay = "reap: " + msg.err.Error()
	case msg.dryRun && msg.e.Planned:
		// The question is the footer's: a long plan is cut, never it.
		m.confirm = msg.root
		m.overlay = msg.e.Text
		m.status = fmt.Sprintf("End tree %d as the plan says? y ends it, any other key leaves it", msg.root)
	case msg.dryRun:
		m.overlay = msg.e.Text
		m.status = fmt.Sprintf("The policy would not signal tree %d: nothing to end.", msg.root)
	default:
		m.overlay = msg.e.Text
		return m.fetch()
	}
	return nil
}

// key handles a key press.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	if k.String() == "ctrl+c" {
		return tea.Quit
	}
	if m.overlay != "" {
		root := m.confirm
		m.overlay, m.confirm = "", 0
		if root != 0 && k.String() == "y" {
			m.status = fmt.Sprintf("ending tree %d …", root)
			return m.end(root, false)
		}
		if root != 0 {
			m.status = fmt.Sprintf("tree %d left as it is", root)
		}
		return nil
	}
	if m.searching {
		switch k.Code {
		case tea.KeyEnter:
			m.searching = false
		case tea.KeyEscape:
			m.searching, m.search = false, ""
		case tea.KeyBackspace:
			if r := []rune(m.search); len(r) > 0 {
				m.search = string(r[:len(r)-1])
			}
		default:
			if k.Mod&^tea.ModShift == 0 {
				m.search += k.Text // what the key types; none for a special key
			}
		}
		m.layout()
		return nil
	}
	switch k.String() {
	case "q":
		return tea.Quit
	case "up":
		m.move(-1)
	case "down", "j":
		m.move(1)
	case "pgup":
		m.move(-m.listHeight())
	case "pgdown":
		m.move(m.listHeight())
	case "home", "g":
		m.move(-len(m.rows))
	case "end", "G":
		m.move(len(m.rows))
	case "enter", "space":
		if r, ok := m.selected(); ok && r.session != 0 {
			m.collapsed[r.session] = !m.collapsed[r.session]
			m.layout()
		}
	case "s":
		i := slices.Index(audit.PSOrder, m.opts.Sort)
		m.setSort(audit.PSOrder[(i+1)%len(audit.PSOrder)])
	case "m":
		m.setSort("memory")
	case "c":
		m.setSort("cpu")
	case "a":
		m.setSort("age")
	case "/":
		m.searching, m.search = true, ""
		m.layout()
	case "esc":
		m.search = ""
		m.layout()
	case "r":
		return m.fetch()
	case "e":
		if r, ok := m.selected(); ok && r.pid != 0 {
			src, pid := m.src, r.pid
			m.status = fmt.Sprintf("explaining %d …", pid)
			return guard(func() tea.Msg {
				text, err := src.Explain(context.Background(), pid)
				return explainMsg{text, err}
			})
		}
	case "k":
		r, ok := m.selected()
		switch {
		case !ok || r.pid == 0 && r.root == 0:
		case r.root == 0:
			m.status = fmt.Sprintf("pid %d is a live session's process, not a finding: reaper never ends it", r.pid)
		default:
			m.status = fmt.Sprintf("planning tree %d …", r.root)
			return m.end(r.root, true)
		}
	}
	return nil
}

func (m *Model) end(root int, dryRun bool) tea.Cmd {
	src := m.src
	return guard(func() tea.Msg {
		e, err := src.End(context.Background(), root, dryRun)
		return endMsg{root, dryRun, e, err}
	})
}

func (m *Model) setSort(key string) {
	m.opts.Sort = key
	if m.view != nil {
		m.view.Sort(key)
	}
	m.layout()
}

func (m *Model) selected() (row, bool) {
	if m.cursor < 0 || m.cursor >= len(m.rows) {
		return row{}, false
	}
	return m.rows[m.cursor], true
}

// move moves the cursor d rows, past the headings no key acts on.
func (m *Model) move(d int) {
	m.cursor = max(0, min(len(m.rows)-1, m.cursor+d))
	step := 1
	if d < 0 {
		step = -1
	}
	for _, s := range []int{step, -step} {
		for i := m.cursor; i >= 0 && i < len(m.rows); i += s {
			if m.rows[i].pid != 0 {
				m.cursor = i
				return
			}
		}
	}
}

// listHeight is how many rows fit between the header and the footer.
func (m *Model) listHeight() int { return max(1, m.height-3) }

// layout makes the rows from the view: each session's line, its tree
// unless folded, then the orphans; the search keeps the rows that hold
// it (and the line of their session or tree). The cursor stays on the
// same pid where it can.
func (m *Model) layout() {
	var was int
	if r, ok := m.selected(); ok {
		was = r.pid
	}
	m.rows = m.rows[:0]
	if m.view == nil {
		return
	}
	st := m.opts.Style
	match := func(s string) bool { return m.search == "" || strings.Contains(s, m.search) }
	for _, s := range m.view.Sessions {
		head := sessionText(s, m.collapsed[s.PID], st)
		var procs []row
		for _, p := range s.Processes {
			text := procText(p, st)
			r := row{text: text, pid: p.PID, live: len(p.Leak) == 0}
			if len(p.Leak) > 0 {
				r.root = p.PID
			}
			if match(text) || match(head) {
				procs = append(procs, r)
			}
		}
		if len(procs) == 0 && !match(head) {
			continue
		}
		m.rows = append(m.rows, row{text: head, pid: s.PID, session: s.PID, live: s.State != "ended"})
		if !m.collapsed[s.PID] {
			m.rows = append(m.rows, procs...)
		}
	}
	if len(m.view.Orphans) > 0 {
		m.rows = append(m.rows, row{text: "orphans — the findings no live session holds"})
	}
	for _, o := range m.view.Orphans {
		head := fmt.Sprintf("tree %d  %s  %s  %s", o.RootPID, audit.HumanBytes(o.MemoryBytes), strings.Join(o.Reasons, ","), audit.RuleText(o))
		var procs []row
		for _, p := range o.Processes {
			text := procText(p, st)
			if match(text) || match(head) {
				procs = append(procs, row{text: text, pid: p.PID, root: o.RootPID})
			}
		}
		if len(procs) == 0 && !match(head) {
			continue
		}
		m.rows = append(m.rows, row{text: head, pid: o.RootPID, root: o.RootPID})
		m.rows = append(m.rows, procs...)
	}
	if len(m.view.Copies) > 0 {
		m.rows = append(m.rows, row{text: "copies across live sessions — never a finding"})
	}
	for _, d := range m.view.Copies {
		if text := audit.CopiesLine(d) + "  " + audit.Printable(d.Command); match(text) {
			m.rows = append(m.rows, row{text: "  " + text})
		}
	}
	for _, h := range m.view.Headroom {
		if w := h.Warning(); w != "" {
			m.rows = append(m.rows, row{text: "warning: " + w})
		}
	}
	m.cursor = min(m.cursor, max(0, len(m.rows)-1))
	for i, r := range m.rows {
		if was != 0 && r.pid == was {
			m.cursor = i
			break
		}
	}
	m.move(0)
}

func sessionText(s audit.PSSession, folded bool, st audit.Style) string {
	fold := "▾"
	if folded {
		fold = "▸"
	}
	state := s.State
	if st.Color && state == "ended" {
		state = "\x1b[31m" + state + "\x1b[0m"
	}
	leaks := ""
	if s.Leaks > 0 {
		leaks = "  " + audit.Plural(s.Leaks, "leak")
		if st.Color {
			leaks = "\x1b[33m" + leaks + "\x1b[0m"
		}
	}
	id := ""
	if s.SessionID != "" {
		id = "  " + audit.Printable(s.SessionID) // a user's record's word
	}
	up := "up " + audit.HumanAge(time.Duration(s.AgeSeconds)*time.Second)
	if s.State == "ended" {
		up = s.Started() // its process is gone: not "up 0s"
	}
	return fmt.Sprintf("%s %s %d %s %s %s%s%s", fold, audit.Printable(s.Title), s.PID, state, audit.HumanBytes(s.MemoryBytes), up, leaks, id)
}

func procText(p audit.PSProcess, st audit.Style) string {
	what := p.Kind
	if p.Name != "" {
		what += " " + p.Name
	}
	leak := ""
	if len(p.Leak) > 0 {
		leak = "LEAK " + strings.Join(p.Leak, ",") + " "
		if st.Color {
			leak = "\x1b[33m" + leak + "\x1b[0m"
		}
	}
	return fmt.Sprintf("  %s%-7d %-6s %9s %s%s", strings.Repeat(" ", min(p.Depth, 8)), p.PID, what, audit.HumanBytes(p.MemoryBytes), leak, audit.Printable(p.Cmdline))
}

// View draws the screen: a header, the rows that fit, a footer of keys
// (or the search, or what was last said), each line within the width; an
// overlay replaces the list until a key.
func (m *Model) View() tea.View {
	v := tea.NewView(m.screen())
	v.AltScreen = true
	return v
}

// screen is what View draws: the heading, the list, the footer.
func (m *Model) screen() string {
	var b strings.Builder
	line := func(s string) {
		b.WriteString(clip(s, m.width))
		b.WriteString("\n")
	}
	head := "reaper top · loading …"
	if m.view != nil {
		t := m.view.Total
		head = fmt.Sprintf("reaper top %s · %s, %s · orphans %d, %s · by %s", m.refreshed.Format("15:04:05"),
			audit.Plural(t.Sessions, "session"), audit.HumanBytes(t.MemoryBytes), t.Orphans, audit.HumanBytes(t.OrphanBytes), m.opts.Sort)
	}
	line(head)
	if m.err != "" {
		line("error: " + m.err)
	}
	height := m.listHeight()
	if m.overlay != "" {
		lines := strings.Split(strings.TrimRight(m.overlay, "\n"), "\n")
		if len(lines) > height {
			lines = append(lines[:height-1], "…")
		}
		for _, l := range lines {
			line(l)
		}
	} else {
		if m.cursor < m.first {
			m.first = m.cursor
		}
		if m.cursor >= m.first+height {
			m.first = m.cursor - height + 1
		}
		for i := m.first; i < len(m.rows) && i < m.first+height; i++ {
			text := clip(m.rows[i].text, m.width-1)
			if i == m.cursor {
				text = "\x1b[7m" + text + "\x1b[0m"
			}
			b.WriteString(text + "\n")
		}
		if len(m.rows) == 0 && m.view != nil {
			line("no agent session and no orphan")
		}
	}
	switch {
	case m.searching:
		line("/" + m.search)
	case m.status != "":
		line(m.status)
	default:
		line("q quit · ↑↓ move · enter fold · s/m/c/a sort · / search · e explain · k end")
	}
	return b.String()
}

// clip cuts s to n columns (runes; escape sequences pass whole).
func clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	cols := 0
	esc := false
	for _, r := range s {
		switch {
		case r == '\x1b':
			esc = true
		case esc:
			if r >= '@' && r <= '~' && r != '[' {
				esc = false
			}
		default:
			if cols == n {
				if strings.Contains(s, "\x1b[") {
					b.WriteString("\x1b[0m")
				}
				return b.String()
			}
			cols++
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Run runs top on the terminal until q, Ctrl-C, or ctx's end (reaper's
// SIGINT or SIGTERM: the signal may come before Bubble Tea has a handler
// of its own); opts give the program its input and output (a test's
// pseudo-terminal). ctx's end is an ordinary quit, which waits for the
// input reader before it gives the terminal back (the kill path does
// not).
func Run(ctx context.Context, m *Model, opts ...tea.ProgramOption) error {
	p := tea.NewProgram(m, opts...)
	stop := context.AfterFunc(ctx, func() { p.Send(doneMsg{}) })
	defer stop()
	_, err := p.Run()
	if err == nil {
		err = m.crashed
	}
	return err
}

// doneMsg is Run's context ended: top quits.
type doneMsg struct{}
