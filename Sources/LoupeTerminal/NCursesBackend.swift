import CNCurses
import Glibc
import LoupeTUI

/// The real terminal, through wide-character ncurses.
///
/// It owns the terminal from ``init(environment:)`` to ``shutdown()``: raw mode, no echo,
/// keypad decoding, a 25 ms escape delay, hidden cursor, mouse clicks. Frames are written
/// cell by cell where they changed since the last one (``Frame/diff(from:)``), and ncurses sends the difference to the
/// terminal once per frame. Colours are RGB in the frame and reduced here to the terminal's
/// ``ColorDepth``. A crash signal restores the terminal before the process dies.
package final class NCursesBackend: TerminalBackend {
    package let colorDepth: ColorDepth
    private let screen: OpaquePointer
    private var previous: Frame?
    private var pairs: [PairKey: Int32] = [:]
    private var nextPair: Int32 = 1
    private let maxPairs: Int32
    private var isShutDown = false

    private struct PairKey: Hashable {
        var foreground: Int32
        var background: Int32
    }

    /// Takes over the controlling terminal.
    ///
    /// - Throws: ``TerminalError`` when stdin/stdout are not a terminal, the locale is not
    ///   UTF-8, or TERM names no known terminal.
    package init(environment: [String: String]) throws(TerminalError) {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else { throw .notATerminal }
        setlocale(LC_ALL, "")
        let codeset = String(cString: nl_langinfo(Int32(CODESET)))
        guard codeset.uppercased().filter({ $0 != "-" }) == "UTF8" else {
            throw .notUTF8(codeset: codeset)
        }
        let term = environment["TERM"] ?? ""
        guard !term.isEmpty, let screen = loupe_newterm_stdio() else { throw .unknownTerminal(term: term) }
        self.screen = screen
        set_term(screen)
        raw()
        noecho()
        nonl()
        keypad(loupe_stdscr(), true)
        set_escdelay(25)
        curs_set(0)
        var depth = ColorDepth.none
        if has_colors() {
            start_color()
            use_default_colors()
            depth = ColorDepth.detect(colors: Int(loupe_colors()), environment: environment)
        }
        colorDepth = depth
        maxPairs = Int32(loupe_color_pairs())
        mousemask(loupe_mouse_buttons(), nil)
        mouseinterval(0)
        NCursesBackend.installCrashRestore()
    }

    package var size: Size { Size(width: Int(loupe_cols()), height: Int(loupe_lines())) }

    package func present(_ frame: Frame) {
        let diff = frame.diff(from: previous)
        if diff.isFullRedraw { werase(loupe_stdscr()) }
        var cell = cchar_t()
        for change in diff.changes {
            write(change.cell, into: &cell)
            // Writing the bottom-right cell may report ERR after scrolling is refused; the
            // cell is drawn all the same.
            _ = mvwadd_wch(loupe_stdscr(), Int32(change.y), Int32(change.x), &cell)
        }
        wnoutrefresh(loupe_stdscr())
        doupdate()
        previous = frame
    }

    private func write(_ source: Cell, into cell: inout cchar_t) {
        // A cchar_t holds a base character and a few combining marks; longer clusters (long ZWJ
        // emoji sequences) keep what fits.
        var wide = source.grapheme.unicodeScalars.prefix(5).map { wchar_t(bitPattern: $0.value) }
        if wide.isEmpty { wide = [wchar_t(32)] }
        wide.append(0)
        let pair = pairNumber(for: source.style)
        wide.withUnsafeBufferPointer { buffer in
            _ = loupe_setcchar(&cell, buffer.baseAddress, attributes(source.style), pair)
        }
    }

    private func attributes(_ style: Style) -> attr_t {
        var result = loupe_attr_normal()
        if style.attributes.contains(.bold) { result |= loupe_attr_bold() }
        if style.attributes.contains(.dim) { result |= loupe_attr_dim() }
        if style.attributes.contains(.italic) { result |= loupe_attr_italic() }
        if style.attributes.contains(.underline) { result |= loupe_attr_underline() }
        if style.attributes.contains(.reverse) { result |= loupe_attr_reverse() }
        return result
    }

    private func pairNumber(for style: Style) -> Int32 {
        guard colorDepth != .none else { return 0 }
        let key = PairKey(
            foreground: style.foreground.flatMap(colorDepth.colorNumber) ?? -1,
            background: style.background.flatMap(colorDepth.colorNumber) ?? -1
        )
        if key.foreground == -1 && key.background == -1 { return 0 }
        if let known = pairs[key] { return known }
        // Out of pairs: fall back to the default colours rather than recolour existing cells.
        guard nextPair < maxPairs else { return 0 }
        let pair = nextPair
        nextPair += 1
        init_extended_pair(pair, key.foreground, key.background)
        pairs[key] = pair
        return pair
    }

    package func nextEvent(timeoutMilliseconds: Int) -> InputEvent? {
        wtimeout(loupe_stdscr(), Int32(timeoutMilliseconds))
        var code: wint_t = 0
        let status = wget_wch(loupe_stdscr(), &code)
        if status == KEY_CODE_YES { return decodeFunctionKey(Int32(code)) }
        guard status == OK else { return nil }
        return decodeCharacter(UInt32(code))
    }

    private func decodeCharacter(_ value: UInt32) -> InputEvent? {
        switch value {
        case 27:
            // ESC then a key within the escape delay is alt+key.
            wtimeout(loupe_stdscr(), 0)
            var next: wint_t = 0
            if wget_wch(loupe_stdscr(), &next) == OK, let scalar = Unicode.Scalar(UInt32(next)), next >= 32 {
                return .key(.alt(Character(scalar)))
            }
            return .key(.escape)
        case 9: return .key(.tab)
        case 10, 13: return .key(.enter)
        case 8, 127: return .key(.backspace)
        case 1...26: return .key(.control(Character(Unicode.Scalar(UInt8(96 + value)))))
        case 0..<32: return nil
        default:
            guard let scalar = Unicode.Scalar(value) else { return nil }
            return .key(.character(Character(scalar)))
        }
    }

    private func decodeFunctionKey(_ code: Int32) -> InputEvent? {
        switch code {
        case KEY_UP: return .key(.up)
        case KEY_DOWN: return .key(.down)
        case KEY_LEFT: return .key(.left)
        case KEY_RIGHT: return .key(.right)
        case KEY_HOME: return .key(.home)
        case KEY_END: return .key(.end)
        case KEY_PPAGE: return .key(.pageUp)
        case KEY_NPAGE: return .key(.pageDown)
        case KEY_DC: return .key(.delete)
        case KEY_IC: return .key(.insert)
        case KEY_BACKSPACE: return .key(.backspace)
        case KEY_ENTER: return .key(.enter)
        case KEY_BTAB: return .key(.backTab)
        case KEY_RESIZE:
            previous = nil
            return .resize(size)
        case KEY_MOUSE:
            var event = MEVENT()
            guard getmouse(&event) == OK else { return nil }
            let point = Point(x: Int(event.x), y: Int(event.y))
            if loupe_is_wheel_up(event.bstate) != 0 { return .mouse(MouseEvent(.wheelUp, at: point)) }
            if loupe_is_wheel_down(event.bstate) != 0 { return .mouse(MouseEvent(.wheelDown, at: point)) }
            if loupe_is_button1(event.bstate) != 0 { return .mouse(MouseEvent(.press, at: point)) }
            return nil
        default:
            for n in 1...12 where code == loupe_key_f(Int32(n)) { return .key(.function(n)) }
            return nil
        }
    }

    package func suspend() {
        endwin()
        kill(getpid(), SIGSTOP)
        // Continued: ncurses restores program mode on the next refresh.
        invalidate()
        wrefresh(loupe_stdscr())
    }

    package func runInTerminal(_ arguments: [String]) -> Int32 {
        endwin()
        let status = ExternalProcess.run(arguments)
        invalidate()
        wrefresh(loupe_stdscr())
        return status
    }

    package func invalidate() {
        previous = nil
        loupe_force_full_redraw()
    }

    package func copyToClipboard(_ text: String) {
        loupe_write_raw("\u{1B}]52;c;" + Self.base64(Array(text.utf8)) + "\u{07}")
    }

    /// Standard base64 (RFC 4648), what OSC 52 carries.
    package static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * $1.offset) }
            for position in 0..<4 {
                out.append(
                    position <= chunk.count ? alphabet[Int(value >> (18 - 6 * position) & 63)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    package func shutdown() {
        guard !isShutDown else { return }
        isShutDown = true
        endwin()
        delscreen(screen)
    }

    /// On a fatal signal (a Swift trap is SIGILL or SIGTRAP), leave curses mode so the shell
    /// gets a usable terminal, then die with the same signal. `endwin` is not formally
    /// async-signal-safe; htop's crash handler makes the same trade, and the alternative is a
    /// terminal left in raw mode.
    private static func installCrashRestore() {
        for signal in [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE] {
            Glibc.signal(signal) { received in
                endwin()
                Glibc.signal(received, SIG_DFL)
                raise(received)
            }
        }
    }
}
