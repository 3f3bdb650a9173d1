package render

import (
	"fmt"
	"strings"
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
}

// mdDoc collects blocks and writes as many as fit in a byte budget.
type mdDoc struct {
	blocks []mdBlock
}

func (d *mdDoc) add(b mdBlock) { d.blocks = append(d.blocks, b) }

// para adds lines that are written whole or not at all.
func (d *mdDoc) para(lines ...string) { d.add(mdBlock{head: lines}) }

func size(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	return n
}

// render joins the blocks within limit bytes, footer included. When a block
// does not fit, as many of its rows as fit are kept, a note says how many
// were left out, and every later block is dropped for one truncation note
// before the footer: the reader always learns that something is missing
// and where to find it.
func (d *mdDoc) render(limit int, footer []string) string {
	var out []string
	note := func(n int) string {
		return fmt.Sprintf("> [!NOTE]\n> This comment was cut to stay under %d bytes: %d more block(s) are not shown. The full report is in the run's `report.json` artifact and job summary.", limit, n)
	}
	budget := limit - size(footer)
	reserve := len(note(len(d.blocks))) + 2
	for i, b := range d.blocks {
		if i > 0 {
			// A blank line ends the previous table or paragraph.
			b.head = append([]string{""}, b.head...)
		}
		all := size(b.head) + size(b.rows) + size(b.tail)
		if all <= budget-reserve || (i == len(d.blocks)-1 && all <= budget) {
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
		out = append(out, "", note(len(d.blocks)-i))
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
