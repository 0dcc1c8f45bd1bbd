//! A report as people read it: a title, then tables, headings and lines of
//! text, rendered as plain text for a terminal or as Markdown for an issue
//! or a wiki. Every command's human output is one [`Document`]; CSV is the
//! data of its main [`Table`], JSON the result struct itself.

use super::table::Table;
use super::text::wrap;

/// One part of a document.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// A table, with its notes under it.
    Table(Table),
    /// A heading over what follows.
    Heading(String),
    /// Lines of prose (wrapped in text, kept as paragraphs in Markdown).
    Lines(Vec<String>),
}

/// A titled sequence of parts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Document {
    /// The first line.
    pub title: String,
    /// What follows, in order.
    pub parts: Vec<Part>,
}

impl Document {
    /// A document with only its title.
    pub fn new(title: impl Into<String>) -> Document {
        Document {
            title: title.into(),
            parts: Vec::new(),
        }
    }

    /// Adds a table.
    pub fn table(&mut self, table: Table) -> &mut Self {
        self.parts.push(Part::Table(table));
        self
    }

    /// Puts `tables` (a kind's headline) before every part added so far.
    pub fn lead(&mut self, tables: Vec<Table>) -> &mut Self {
        let after = std::mem::take(&mut self.parts);
        self.parts = tables.into_iter().map(Part::Table).chain(after).collect();
        self
    }

    /// Adds a heading.
    pub fn heading(&mut self, heading: impl Into<String>) -> &mut Self {
        self.parts.push(Part::Heading(heading.into()));
        self
    }

    /// Adds lines of prose (nothing when empty).
    pub fn lines(&mut self, lines: Vec<String>) -> &mut Self {
        if !lines.is_empty() {
            self.parts.push(Part::Lines(lines));
        }
        self
    }

    /// Adds one line of prose.
    pub fn line(&mut self, line: impl Into<String>) -> &mut Self {
        self.lines(vec![line.into()])
    }

    /// Plain text: the title, then each part after a blank line.
    pub fn text(&self) -> String {
        use crate::printable::{MESSAGE_CHARS, printable};
        let mut out = format!("{}\n", printable(&self.title, MESSAGE_CHARS));
        let mut after_heading = false;
        for part in &self.parts {
            // A heading sits on what follows, with no blank line between.
            if !after_heading {
                out.push('\n');
            }
            after_heading = matches!(part, Part::Heading(_));
            match part {
                Part::Table(t) => out += &t.text(),
                Part::Heading(h) => {
                    out += &printable(h, MESSAGE_CHARS);
                    out.push('\n');
                }
                Part::Lines(lines) => {
                    for line in lines {
                        out += &wrap(&printable(line, MESSAGE_CHARS), 88, "");
                    }
                }
            }
        }
        out.replace("\n\n\n", "\n\n")
    }

    /// Markdown: the title as a heading, tables as GitHub tables.
    pub fn markdown(&self) -> String {
        use crate::output::table::escape_markdown;
        let mut out = format!("## {}\n", escape_markdown(&self.title));
        for part in &self.parts {
            out.push('\n');
            match part {
                Part::Table(t) => out += &t.markdown(),
                Part::Heading(h) => out += &format!("### {}\n", escape_markdown(h)),
                Part::Lines(lines) => {
                    for line in lines {
                        out += &format!("{}\n\n", escape_markdown(line));
                    }
                }
            }
        }
        out.trim_end().to_string() + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::table::Cell;

    #[test]
    fn text_and_markdown_hold_the_same_parts() {
        let mut t = Table::new(&["<level", "ns"]);
        t.row(vec!["L1".into(), Cell::float(1.25, 2)]);
        let mut d = Document::new("memlat: test");
        d.table(t).heading("notes").line("a note");
        let text = d.text();
        assert!(
            text.starts_with("memlat: test\n\nlevel    ns\nL1     1.25\n"),
            "{text}"
        );
        assert!(text.ends_with("\nnotes\na note\n"), "{text}");
        let md = d.markdown();
        assert!(md.starts_with("## memlat: test\n\n| level | ns |"), "{md}");
        assert!(
            md.contains("### notes\n") && md.ends_with("a note\n"),
            "{md}"
        );
    }
}
