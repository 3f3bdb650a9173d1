package render

import (
	"fmt"
	"sort"
	"strings"
)

// Priorities of blocks: what the short form leaves out first when it is
// over its aim. Keep is never left out for the aim (only the hard limit
// can cut it, row by row).
const (
	prioKeep    = 0 // the verdict, Needs attention, the Layer 2 matrix, the cost line
	prioFocus   = 1 // rows that need attention in a layer's own table
	prioDecided = 2 // how the gate decided
	prioDetail  = 3 // tokens, tools, confusion, trajectories, unmatched
	prioPassing = 4 // folded tables of every row, passing ones included
	prioLatency = 5 // latency distributions: the first to go
)

// mdBlock is a unit of a Markdown body that is written whole or cut only
// between rows: a heading, a table, a <details> section. Head and tail
// always go together, so a cut never leaves a <details> open or a table
// without its header.
type mdBlock struct {
	head []string
	rows []string
	tail []string
	// what names the rows in the note when some are cut ("checks").
	what string
	// prio is when the block is left out to reach the aim (prioKeep:
	// never); label names it in the note that says so.
	prio  int
	label string
}

// mdDoc collects blocks and writes as many as fit in a byte budget.
type mdDoc struct {
	blocks []mdBlock
}

func (d *mdDoc) add(b mdBlock) { d.blocks = append(d.blocks, b) }

// keep adds lines that are always written (within the hard limit).
func (d *mdDoc) keep(lines ...string) { d.add(mdBlock{head: lines}) }

// para adds lines that are written whole or not at all, left out at
// prio to reach the aim.
func (d *mdDoc) para(prio int, label string, lines ...string) {
	d.add(mdBlock{head: lines, prio: prio, label: label})
}

func size(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	return n
}

func (b mdBlock) size() int { return size(b.head) + size(b.rows) + size(b.tail) + 1 }

// render joins the blocks: first, while the body is over aim, whole blocks
// are left out, the highest prio (and, among equals, the last) first, and
// one note names them; then, within limit bytes (footer included), a block
// that does not fit keeps as many of its rows as fit with a note saying
// how many were left out, and every later block is dropped for one
// truncation note before the footer: the reader always learns that
// something is missing and where to find it.
func (d *mdDoc) render(limit, aim int, footer []string) string {
	blocks := d.blocks
	total := size(footer)
	for _, b := range blocks {
		total += b.size()
	}
	if total > aim {
		order := make([]int, len(blocks))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(x, y int) bool {
			if blocks[order[x]].prio != blocks[order[y]].prio {
				return blocks[order[x]].prio > blocks[order[y]].prio
			}
			return order[x] > order[y]
		})
		drop := map[int]bool{}
		reserve := 400 // the note
		for _, i := range order {
			if total+reserve <= aim || blocks[i].prio == prioKeep {
				break
			}
			drop[i] = true
			total -= blocks[i].size()
		}
		if len(drop) > 0 {
			var kept []mdBlock
			var left []string
			for i, b := range blocks {
				if !drop[i] {
					kept = append(kept, b)
				} else if b.label != "" && !containsStr(left, b.label) {
					left = append(left, b.label)
				}
			}
			note := fmt.Sprintf("<sub>Left out to keep this comment short: %s. The job summary and report.html have them.</sub>", orDefault(strings.Join(left, ", "), fmt.Sprintf("%d sections", len(drop))))
			blocks = append(kept, mdBlock{head: []string{note}})
		}
	}
	return renderWithin(blocks, limit, footer)
}

func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func renderWithin(blocks []mdBlock, limit int, footer []string) string {
	var out []string
	note := func(n int) string {
		return fmt.Sprintf("> [!NOTE]\n> This comment was cut to stay under %d bytes: %d more block(s) are not shown. The full report is in the run's `report.json` artifact and job summary.", limit, n)
	}
	budget := limit - size(footer)
	reserve := len(note(len(blocks))) + 2
	for i, b := range blocks {
		if i > 0 {
			// A blank line ends the previous table or paragraph.
			b.head = append([]string{""}, b.head...)
		}
		all := size(b.head) + size(b.rows) + size(b.tail)
		if all <= budget-reserve || (i == len(blocks)-1 && all <= budget) {
			out = append(out, b.head...)
			out = append(out, b.rows...)
			out = append(out, b.tail...)
			budget -= all
			continue
		}
		// Cut inside this block: its head and tail, the rows that fit, and
		// a line saying how many did not.
		fixed := size(b.head) + size(b.tail) + 120
		if len(b.rows) > 0 && fixed <= budget-reserve {
			room := budget - reserve - fixed
			kept := 0
			for _, r := range b.rows {
				if len(r)+1 > room {
					break
				}
				room -= len(r) + 1
				kept++
			}
			if kept > 0 {
				out = append(out, b.head...)
				out = append(out, b.rows[:kept]...)
				out = append(out, b.tail...)
				out = append(out, "", fmt.Sprintf("_… %d more %s not shown._", len(b.rows)-kept, orDefault(b.what, "rows")))
			}
		}
		out = append(out, "", note(len(blocks)-i))
		break
	}
	out = append(out, footer...)
	return strings.Join(out, "\n") + "\n"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
