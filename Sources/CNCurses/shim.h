// The only C header the TUI sees. Swift 6 rejects C globals such as `stdscr` and `COLORS` as
// shared mutable state, and cannot import function-like macros (`A_BOLD`, `KEY_F(n)`,
// `BUTTON1_PRESSED`), so each one the backend needs is wrapped in a `static inline` function.
#ifndef LOUPE_CNCURSES_SHIM_H
#define LOUPE_CNCURSES_SHIM_H

#define NCURSES_WIDECHAR 1
#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif
#include <locale.h>
#include <langinfo.h>
#include <stdio.h>
#include <wchar.h>
#include <ncursesw/curses.h>

static inline WINDOW *loupe_stdscr(void) { return stdscr; }
static inline int loupe_colors(void) { return COLORS; }
static inline int loupe_color_pairs(void) { return COLOR_PAIRS; }
static inline int loupe_lines(void) { return LINES; }
static inline int loupe_cols(void) { return COLS; }
/// `newterm` on the process's own stdin/stdout (C's `stdin`/`stdout` are globals too).
static inline SCREEN *loupe_newterm_stdio(void) { return newterm(NULL, stdout, stdin); }

/// Writes an escape sequence ncurses does not know (OSC 52) straight to the terminal, after what
/// ncurses has buffered.
static inline void loupe_write_raw(const char *text) {
    fflush(stdout);
    fputs(text, stdout);
    fflush(stdout);
}
static inline int loupe_force_full_redraw(void) { return clearok(curscr, TRUE); }

static inline attr_t loupe_attr_normal(void) { return A_NORMAL; }
static inline attr_t loupe_attr_bold(void) { return A_BOLD; }
static inline attr_t loupe_attr_dim(void) { return A_DIM; }
static inline attr_t loupe_attr_italic(void) { return A_ITALIC; }
static inline attr_t loupe_attr_underline(void) { return A_UNDERLINE; }
static inline attr_t loupe_attr_reverse(void) { return A_REVERSE; }

static inline int loupe_key_f(int n) { return KEY_F(n); }

static inline mmask_t loupe_mouse_buttons(void) {
    return BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED;
}
static inline int loupe_is_button1(mmask_t m) { return (m & (BUTTON1_PRESSED | BUTTON1_CLICKED)) != 0; }
static inline int loupe_is_wheel_up(mmask_t m) { return (m & BUTTON4_PRESSED) != 0; }
static inline int loupe_is_wheel_down(mmask_t m) { return (m & BUTTON5_PRESSED) != 0; }

/// Sets a wide cell: `pair` is an extended colour pair (ncurses reads it through `opts`).
static inline int loupe_setcchar(cchar_t *cell, const wchar_t *text, attr_t attrs, int pair) {
    return setcchar(cell, text, attrs, 0, &pair);
}

/// `wcwidth` is not visible from Swift's Glibc module; the width table test compares against it.
static inline int loupe_wcwidth(wchar_t c) { return wcwidth(c); }

#endif
