//! One table type for every command: rendered as aligned text for people,
//! CSV (through the `csv` crate) for scripts, and Markdown for issues and
//! wikis. Cells keep their numbers: text and Markdown round them to the
//! column's decimals, CSV writes them in full; a missing value is `-` for
//! people and an empty field for scripts.

use std::fmt::Write as _;

/// How a column lines up in text and Markdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text columns.
    Left,
    /// Number columns.
    Right,
}

/// One column: its header and alignment.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Header text.
    pub name: String,
    /// Alignment.
    pub align: Align,
}

/// One cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Text as it is.
    Text(String),
    /// A whole number.
    Int(i128),
    /// A number shown with `decimals` digits after the point (in full in CSV).
    Float {
        /// The value.
        value: f64,
        /// Digits shown to people.
        decimals: usize,
    },
    /// No value: `-` for people, empty in CSV.
    Missing,
}

impl Cell {
    /// A number with `decimals` digits for people; missing when not finite.
    pub fn float(value: f64, decimals: usize) -> Cell {
        if value.is_finite() {
            Cell::Float { value, decimals }
        } else {
            Cell::Missing
        }
    }

    /// An optional number.
    pub fn opt(value: Option<f64>, decimals: usize) -> Cell {
        value.map_or(Cell::Missing, |v| Cell::float(v, decimals))
    }

    /// Text.
    pub fn text(value: impl Into<String>) -> Cell {
        Cell::Text(value.into())
    }

    fn human(&self) -> String {
        match self {
            // Shown to people: escaped and cut (`crate::printable`).
            Cell::Text(t) => crate::printable::printable(t, crate::printable::FIELD_CHARS).into(),
            Cell::Int(i) => i.to_string(),
            Cell::Float { value, decimals } => no_negative_zero(format!("{value:.decimals$}")),
            Cell::Missing => "-".into(),
        }
    }

    fn machine(&self) -> String {
        match self {
            Cell::Text(t) => t.clone(),
            Cell::Int(i) => i.to_string(),
            Cell::Float { value, .. } => value.to_string(),
            Cell::Missing => String::new(),
        }
    }
}

impl From<u64> for Cell {
    fn from(v: u64) -> Cell {
        Cell::Int(v.into())
    }
}

impl From<usize> for Cell {
    fn from(v: usize) -> Cell {
        Cell::Int(v as i128)
    }
}

impl From<&str> for Cell {
    fn from(v: &str) -> Cell {
        Cell::Text(v.into())
    }
}

impl From<String> for Cell {
    fn from(v: String) -> Cell {
        Cell::Text(v)
    }
}

/// A table: columns, rows, and notes printed under it for people.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// Columns, in order.
    pub columns: Vec<Column>,
    /// Rows; each has one cell per column.
    pub rows: Vec<Vec<Cell>>,
    /// Lines under the table in text and Markdown (not in CSV).
    pub notes: Vec<String>,
}

impl Table {
    /// A table with these columns: a name starting with `<` is left-aligned
    /// (the `<` is dropped), any other right-aligned.
    pub fn new(columns: &[&str]) -> Table {
        Table {
            columns: columns
                .iter()
                // A column may be named by a label read from a file: escaped.
                .map(|c| match c.strip_prefix('<') {
                    Some(name) => Column {
                        name: crate::printable::printable(name, usize::MAX).into(),
                        align: Align::Left,
                    },
                    None => Column {
                        name: crate::printable::printable(c, usize::MAX).into(),
                        align: Align::Right,
                    },
                })
                .collect(),
            ..Table::default()
        }
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Adds a row (one cell per column).
    pub fn row(&mut self, cells: Vec<Cell>) -> &mut Self {
        debug_assert_eq!(cells.len(), self.columns.len(), "one cell per column");
        self.rows.push(cells);
        self
    }

    /// Adds a note printed under the table.
    pub fn note(&mut self, note: impl Into<String>) -> &mut Self {
        self.notes.push(note.into());
        self
    }

    fn widths(&self) -> Vec<usize> {
        self.columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                self.rows
                    .iter()
                    .map(|r| r.get(i).map_or(1, |cell| cell.human().chars().count()))
                    .chain([c.name.chars().count()])
                    .max()
                    .unwrap_or(1)
            })
            .collect()
    }

    fn pad(text: &str, width: usize, align: Align) -> String {
        match align {
            Align::Left => format!("{text:<width$}"),
            Align::Right => format!("{text:>width$}"),
        }
    }

    /// Aligned columns separated by two spaces, then the notes.
    pub fn text(&self) -> String {
        let widths = self.widths();
        let line = |cells: Vec<String>| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .zip(&self.columns)
                .map(|((text, &w), c)| Self::pad(text, w, c.align))
                .collect();
            padded.join("  ").trim_end().to_string() + "\n"
        };
        let mut out = line(self.columns.iter().map(|c| c.name.clone()).collect());
        for row in &self.rows {
            out += &line(row.iter().map(Cell::human).collect());
        }
        if !self.notes.is_empty() {
            out.push('\n');
            for note in &self.notes {
                let note = crate::printable::printable(note, crate::printable::MESSAGE_CHARS);
                out += &crate::output::text::wrap(&note, 88, "");
            }
        }
        out
    }

    /// A header and one record per row, numbers in full. Every CSV memlat
    /// writes comes through here, so every test that writes one checks that
    /// its header names each column once (pandas renames a repeated name).
    pub fn csv(&self) -> String {
        let mut writer = csv::Writer::from_writer(Vec::new());
        let header: Vec<String> = self.columns.iter().map(|c| defuse(&c.name)).collect();
        debug_assert!(
            header
                .iter()
                .enumerate()
                .all(|(k, h)| !header[..k].contains(h)),
            "a CSV header names a column twice: {header:?}"
        );
        // Writing to a Vec cannot fail.
        writer.write_record(&header).expect("writing to memory");
        for row in &self.rows {
            writer
                .write_record(row.iter().map(|c| match c {
                    Cell::Text(t) => defuse(t),
                    other => other.machine(),
                }))
                .expect("writing to memory");
        }
        let bytes = writer.into_inner().expect("flushing to memory");
        String::from_utf8(bytes).expect("cells are UTF-8")
    }

    /// A GitHub-flavoured Markdown table, then the notes as a list; every
    /// string escaped ([`escape_markdown`]), each cell on one line.
    pub fn markdown(&self) -> String {
        let escape = |t: String| escape_markdown(&t);
        let mut out = String::new();
        let header: Vec<String> = self
            .columns
            .iter()
            .map(|c| escape(c.name.clone()))
            .collect();
        let _ = writeln!(out, "| {} |", header.join(" | "));
        let rule: Vec<&str> = self
            .columns
            .iter()
            .map(|c| match c.align {
                Align::Left => ":---",
                Align::Right => "---:",
            })
            .collect();
        let _ = writeln!(out, "| {} |", rule.join(" | "));
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(|c| escape(c.human())).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        if !self.notes.is_empty() {
            out.push('\n');
            for note in &self.notes {
                let _ = writeln!(out, "- {}", escape_markdown(note));
            }
        }
        out
    }

    /// The table as an HTML `<table>` (text escaped), its notes as a list under it.
    pub fn html(&self) -> String {
        let mut out = String::from("<table>\n<tr>");
        for c in &self.columns {
            let class = match c.align {
                Align::Left => "l",
                Align::Right => "r",
            };
            let _ = write!(out, "<th class=\"{class}\">{}</th>", escape_html(&c.name));
        }
        out.push_str("</tr>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for (c, cell) in self.columns.iter().zip(row) {
                let class = match c.align {
                    Align::Left => "l",
                    Align::Right => "r",
                };
                let _ = write!(
                    out,
                    "<td class=\"{class}\">{}</td>",
                    escape_html(&cell.human())
                );
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
        if !self.notes.is_empty() {
            out.push_str("<ul class=\"notes\">\n");
            for note in &self.notes {
                let _ = writeln!(out, "<li>{}</li>", escape_html(note));
            }
            out.push_str("</ul>\n");
        }
        out
    }
}

/// `text` with `&`, `<`, `>` and `"` escaped for HTML.
/// A text cell for a spreadsheet: one that begins with `=`, `+`, `-`, `@`
/// (or a tab or carriage return) is a formula to Excel, LibreOffice and
/// Sheets, so it gets a leading `'` (a host name or CPU model from another
/// machine's result must not run there). Negative numbers stay as they
/// are; memlat writes no number with a `+`, so a cell that has one came
/// from elsewhere and is quoted too.
pub fn defuse(text: &str) -> String {
    let risky = text.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let negative_number = text.starts_with('-') && text.parse::<f64>().is_ok_and(f64::is_finite);
    if risky && !negative_number {
        format!("'{text}")
    } else {
        text.to_string()
    }
}

/// A string for Markdown: `<` and `&` escaped (no tag, no `<script>`, no
/// entity), `|`, `[`, `]`, backquotes and a leading `#` or `>` escaped (no
/// cell break, link, heading or quote), line breaks made spaces (a cell
/// stays on its line); `->` is written as it is.
pub fn escape_markdown(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    // `<` and `&` escaped (no tag, no entity); `>` opens nothing but a
    // quote at the start of a line, so `->` stays `->`.
    let mut out = one_line
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('|', "\\|")
        .replace('[', "\\[")
        .replace(']', "\\]")
        .replace('`', "\\`");
    if out.starts_with('#') || out.starts_with('>') {
        out.insert(0, '\\');
    }
    out
}

/// A number as printed, without the sign of a value that rounds to zero
/// (`-0.00`, from -0.001 or -0.0, reads as a negative figure; it is 0.00).
pub fn no_negative_zero(text: String) -> String {
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => text,
    }
}

/// Text for HTML: `&`, `<`, `>` and `"` escaped.
pub fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_that_rounds_to_zero_has_no_sign() {
        assert_eq!(Cell::float(-0.001, 2).human(), "0.00");
        assert_eq!(Cell::float(-0.0, 1).human(), "0.0");
        assert_eq!(Cell::float(-0.01, 2).human(), "-0.01");
        assert_eq!(no_negative_zero("-10".into()), "-10");
    }

    #[test]
    fn markdown_keeps_arrows_and_escapes_tags() {
        assert_eq!(escape_markdown("8 -> 9 lines"), "8 -> 9 lines");
        assert_eq!(
            escape_markdown("<script>x</script>"),
            "&lt;script>x&lt;/script>"
        );
        assert_eq!(escape_markdown("> quoted"), "\\> quoted");
        assert_eq!(escape_markdown("R&D | x"), "R&amp;D \\| x");
    }

    fn example() -> Table {
        let mut t = Table::new(&["<level", "size", "ns"]);
        t.row(vec!["L1".into(), 49152u64.into(), Cell::float(1.4321, 2)]);
        t.row(vec![
            "memory, far".into(),
            Cell::Missing,
            Cell::float(171.0, 2),
        ]);
        t.note("ns: median of 3 repeats");
        t
    }

    #[test]
    fn text_aligns_numbers_right_and_text_left() {
        let text = example().text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "level         size      ns");
        assert_eq!(lines[1], "L1           49152    1.43");
        assert_eq!(lines[2], "memory, far      -  171.00");
        assert_eq!(lines[4], "ns: median of 3 repeats");
    }

    #[test]
    fn csv_quotes_and_keeps_full_numbers() {
        let csv = example().csv();
        assert_eq!(
            csv,
            "level,size,ns\nL1,49152,1.4321\n\"memory, far\",,171\n"
        );
    }

    #[test]
    fn markdown_has_an_alignment_row_and_escapes_pipes() {
        let mut t = example();
        t.row(vec!["a|b".into(), 1u64.into(), Cell::Missing]);
        let md = t.markdown();
        assert!(md.starts_with("| level | size | ns |\n| :--- | ---: | ---: |\n"));
        assert!(md.contains("| a\\|b | 1 | - |"));
        assert!(md.ends_with("- ns: median of 3 repeats\n"));
    }

    #[test]
    fn csv_text_never_begins_a_formula() {
        let mut t = Table::new(&["<host", "=cmd", "ns"]);
        t.row(vec![
            "=HYPERLINK(\"x\")".into(),
            "@SUM(A1)".into(),
            Cell::float(-1.5, 2),
        ]);
        t.row(vec!["+1 evil".into(), "-2+3".into(), "-7".into()]);
        let csv = t.csv();
        for line in csv.lines() {
            for cell in line.split(',') {
                let cell = cell.trim_start_matches('"');
                assert!(
                    !cell.starts_with(['=', '+', '@'])
                        && (!cell.starts_with('-') || cell.parse::<f64>().is_ok()),
                    "{cell} in\n{csv}"
                );
            }
        }
        assert!(csv.contains("'=HYPERLINK") && csv.contains("-1.5") && csv.contains(",-7"));
    }

    #[test]
    fn markdown_holds_no_html_and_no_line_break_in_a_cell() {
        let mut t = Table::new(&["<host", "ns"]);
        t.row(vec![
            "<script>alert(1)</script>".into(),
            Cell::float(1.0, 1),
        ]);
        t.row(vec![
            "a\n# heading\n[x](javascript:alert(1)) <img onerror=y>".into(),
            Cell::Missing,
        ]);
        t.note("<b>note</b>\nsecond");
        let md = t.markdown();
        assert!(
            !md.contains("<script") && !md.contains("<img") && !md.contains("<b>"),
            "{md}"
        );
        assert!(!md.contains("[x](") && md.contains("\\[x\\]"), "{md}");
        assert!(!md.lines().any(|l| l.starts_with('#')), "{md}");
        assert_eq!(md.lines().count(), 2 + 2 + 2, "{md}");
    }

    #[test]
    fn non_finite_numbers_are_missing() {
        assert_eq!(Cell::float(f64::NAN, 2), Cell::Missing);
        assert_eq!(Cell::opt(None, 2), Cell::Missing);
    }
}
