//! Text gathered into lines, one block (paragraph, heading, list item, cell, code line) to a
//! line, whitespace inside a line collapsed: the output of `text::full_text` and of
//! `one_pass::main_text`.

/// Text gathered into lines: whitespace collapsed, empty lines dropped.
#[derive(Default)]
pub(crate) struct Lines {
    text: String,
    /// A space is owed before the next word of the line.
    space: bool,
}

impl Lines {
    pub(crate) fn with_capacity(bytes: usize) -> Lines {
        Lines {
            text: String::with_capacity(bytes),
            space: false,
        }
    }

    /// Appends `text` to the current line, its whitespace collapsed.
    pub(crate) fn push(&mut self, text: &str) {
        for (i, word) in text.split(char::is_whitespace).enumerate() {
            if i > 0 {
                self.space = true;
            }
            if word.is_empty() {
                continue;
            }
            if self.space && !self.text.is_empty() && !self.text.ends_with('\n') {
                self.text.push(' ');
            }
            self.space = false;
            self.text.push_str(word);
        }
    }

    /// Appends the text of a `<pre>` as it is: its line breaks end lines, its spaces stay
    /// (tabs and carriage returns aside, whose widths the text cannot keep).
    pub(crate) fn push_preformatted(&mut self, text: &str) {
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                self.end_line();
            }
            let line = line.trim_end_matches('\r');
            if self.space && !line.is_empty() && !self.text.is_empty() && !self.text.ends_with('\n')
            {
                self.text.push(' ');
            }
            self.space = false;
            self.text.push_str(line);
        }
    }

    /// Ends the current line, if it has any text.
    pub(crate) fn end_line(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
        self.space = false;
    }

    /// The text so far (its bytes).
    pub(crate) fn len(&self) -> usize {
        self.text.len()
    }

    /// The text so far.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    pub(crate) fn finish(mut self) -> String {
        while self.text.ends_with('\n') {
            self.text.pop();
        }
        self.text
    }
}
