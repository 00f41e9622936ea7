package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"os"
	"strconv"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// cell is one character of the captured screen with its colours.
type cell struct {
	r      rune
	fg, bg color.RGBA
	bold   bool
}

// palette is xterm's 16 colours (a dark theme's, as a terminal shows the
// chat).
var palette = [16]color.RGBA{
	{0x1e, 0x1e, 0x1e, 255}, {0xcd, 0x31, 0x31, 255}, {0x0d, 0xbc, 0x79, 255}, {0xe5, 0xe5, 0x10, 255},
	{0x24, 0x72, 0xc8, 255}, {0xbc, 0x3f, 0xbc, 255}, {0x11, 0xa8, 0xcd, 255}, {0xe5, 0xe5, 0xe5, 255},
	{0x76, 0x76, 0x76, 255}, {0xf1, 0x4c, 0x4c, 255}, {0x23, 0xd1, 0x8b, 255}, {0xf5, 0xf5, 0x43, 255},
	{0x3b, 0x8e, 0xea, 255}, {0xd6, 0x70, 0xd6, 255}, {0x29, 0xb8, 0xdb, 255}, {0xff, 0xff, 0xff, 255},
}

var (
	defaultFG = color.RGBA{0xd4, 0xd4, 0xd4, 255}
	defaultBG = color.RGBA{0x1e, 0x1e, 0x1e, 255}
)

// xterm256 is colour n of xterm's 256-colour palette.
func xterm256(n int) color.RGBA {
	switch {
	case n < 16:
		return palette[n]
	case n < 232:
		n -= 16
		level := func(v int) uint8 {
			if v == 0 {
				return 0
			}
			return uint8(55 + 40*v)
		}
		return color.RGBA{level(n / 36), level(n / 6 % 6), level(n % 6), 255}
	}
	g := uint8(8 + 10*(n-232))
	return color.RGBA{g, g, g, 255}
}

// parse turns tmux's `capture-pane -e` output (text with SGR escapes) into
// rows of cells, width columns each.
func parse(capture string, width int) [][]cell {
	var rows [][]cell
	fg, bg, bold := defaultFG, defaultBG, false
	for _, line := range strings.Split(strings.TrimRight(capture, "\n"), "\n") {
		row := make([]cell, 0, width)
		rs := []rune(line)
		for i := 0; i < len(rs); i++ {
			if rs[i] == 0x1b && i+1 < len(rs) && rs[i+1] == '[' {
				j := i + 2
				for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
					j++
				}
				if j < len(rs) && rs[j] == 'm' {
					fg, bg, bold = sgr(string(rs[i+2:j]), fg, bg, bold)
				}
				i = j
				continue
			}
			row = append(row, cell{r: rs[i], fg: fg, bg: bg, bold: bold})
		}
		for len(row) < width {
			row = append(row, cell{r: ' ', fg: defaultFG, bg: bg})
		}
		rows = append(rows, row[:width])
	}
	return rows
}

// sgr applies one Select Graphic Rendition sequence's parameters.
func sgr(params string, fg, bg color.RGBA, bold bool) (color.RGBA, color.RGBA, bool) {
	ps := strings.FieldsFunc(params, func(r rune) bool { return r == ';' || r == ':' })
	if len(ps) == 0 {
		ps = []string{"0"}
	}
	for i := 0; i < len(ps); i++ {
		n, _ := strconv.Atoi(ps[i])
		switch {
		case n == 0:
			fg, bg, bold = defaultFG, defaultBG, false
		case n == 1:
			bold = true
		case n == 22:
			bold = false
		case n >= 30 && n <= 37:
			fg = palette[n-30]
		case n >= 90 && n <= 97:
			fg = palette[n-90+8]
		case n >= 40 && n <= 47:
			bg = palette[n-40]
		case n >= 100 && n <= 107:
			bg = palette[n-100+8]
		case n == 39:
			fg = defaultFG
		case n == 49:
			bg = defaultBG
		case (n == 38 || n == 48) && i+2 < len(ps) && ps[i+1] == "5":
			c, _ := strconv.Atoi(ps[i+2])
			if n == 38 {
				fg = xterm256(c)
			} else {
				bg = xterm256(c)
			}
			i += 2
		case (n == 38 || n == 48) && i+4 < len(ps) && ps[i+1] == "2":
			r, _ := strconv.Atoi(ps[i+2])
			g, _ := strconv.Atoi(ps[i+3])
			b, _ := strconv.Atoi(ps[i+4])
			c := color.RGBA{uint8(r), uint8(g), uint8(b), 255}
			if n == 38 {
				fg = c
			} else {
				bg = c
			}
			i += 4
		}
	}
	return fg, bg, bold
}

// face loads a TrueType font at size points (72 dpi: a point is a pixel).
func face(path string, size float64) (font.Face, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("font %s: %w (apt-get install fonts-dejavu-core)", path, err)
	}
	f, err := opentype.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("font %s: %w", path, err)
	}
	return opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
}

// stand stands in for the characters the chat draws that DejaVu Sans
// Mono lacks.
var stand = map[rune]rune{'⏺': '●', '⎿': '└'}

// render draws the cells with regular and bold faces of one monospace
// font: one character cell per column, a margin around the screen.
func render(rows [][]cell, regular, bold font.Face) *image.RGBA {
	const margin = 12
	adv, _ := regular.GlyphAdvance('M')
	cw := adv.Ceil()
	m := regular.Metrics()
	ch0 := (m.Ascent + m.Descent).Ceil() + 2
	width := len(rows[0])
	img := image.NewRGBA(image.Rect(0, 0, width*cw+2*margin, len(rows)*ch0+2*margin))
	draw.Draw(img, img.Bounds(), &image.Uniform{defaultBG}, image.Point{}, draw.Src)
	for y, row := range rows {
		for x, c := range row {
			r := image.Rect(margin+x*cw, margin+y*ch0, margin+(x+1)*cw, margin+(y+1)*ch0)
			draw.Draw(img, r, &image.Uniform{c.bg}, image.Point{}, draw.Src)
			if c.r == ' ' {
				continue
			}
			f := regular
			if c.bold {
				f = bold
			}
			ch := c.r
			if _, ok := f.GlyphAdvance(ch); !ok {
				ch = stand[ch] // the font lacks it: its nearest look-alike
			}
			d := font.Drawer{Dst: img, Src: &image.Uniform{c.fg}, Face: f,
				Dot: fixed.P(margin+x*cw, margin+y*ch0+m.Ascent.Ceil()+1)}
			d.DrawString(string(ch))
		}
	}
	return img
}
