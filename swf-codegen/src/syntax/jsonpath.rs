//! JSONPath as the drafts write it, checked and classified at build time.
//!
//! The drafts link to Jayway JsonPath; the engine we run (`jsonpath-rust`) implements RFC 9535.
//! Three Jayway spellings that the drafts use are rewritten into their RFC equivalent:
//! - `$.` alone means the whole data: `$`.
//! - `.[` means `[`: `$.[?(@.veggieLike)]` is `$[?(@.veggieLike)]`.
//! - A bare member in a filter, `[?(@.veggieLike)]`, keeps the items whose member is present and
//!   neither `false` nor `null` (the drafts' worked example keeps only the vegetables that are
//!   liked), whereas RFC 9535 only tests that the member exists. It becomes
//!   `(@.veggieLike && @.veggieLike != false && @.veggieLike != null)`.
//!
//! A path of names and indexes only (`[-1]` counting from the end) is definite: it is compiled
//! to direct accessors and yields the value itself. Anything else is a query run by the engine,
//! yielding an array.

use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{JsonPath, PathKind, PathSegment};
use crate::source::Span;
use jsonpath_rust::parser::errors::JsonPathError;
use jsonpath_rust::parser::parse_json_path;

/// Parses and classifies a JSONPath. On error records `BAD_JSONPATH` and returns
/// [`PathKind::Invalid`].
pub fn parse(text: &str, span: Span, diags: &mut Diagnostics) -> JsonPath {
    let kind = match classify(text) {
        Ok(kind) => kind,
        Err(problem) => {
            let diagnostic = diags
                .error(Code::BAD_JSONPATH, span, problem.message(text))
                .help(problem.help(text));
            if let Some(at) = problem.at() {
                diagnostic.within(at);
            }
            PathKind::Invalid
        }
    };
    JsonPath {
        text: text.to_string(),
        kind,
        span,
        strict: false,
    }
}

impl Problem {
    /// The character of the user's text the problem names, if it names one.
    fn at(&self) -> Option<usize> {
        match self {
            Problem::Engine { at, .. } => *at,
            Problem::BlankInName { at } => Some(*at),
            Problem::Empty | Problem::NoRoot | Problem::Rewrite { .. } => None,
        }
    }
}

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq)]
enum Problem {
    Empty,
    NoRoot,
    /// The engine refused it: its explanation and the 1-based character in the user's text.
    Engine {
        reason: String,
        at: Option<usize>,
    },
    /// `$.first name`: the 1-based character of the second word.
    BlankInName {
        at: usize,
    },
    /// Our filter rewrite produced text the engine refuses: a bug of ours, not of the user.
    Rewrite {
        rewritten: String,
        reason: String,
    },
}

impl Problem {
    fn message(&self, text: &str) -> String {
        let text = super::excerpt(text);
        match self {
            Problem::Empty => "the JSONPath is empty".to_string(),
            Problem::NoRoot => format!("JSONPath `{text}` does not start with `$`"),
            Problem::Engine {
                reason,
                at: Some(at),
            } => {
                format!("JSONPath `{text}` does not parse at character {at}: {reason}")
            }
            Problem::Engine { reason, at: None } => {
                format!("JSONPath `{text}` does not parse: {reason}")
            }
            Problem::BlankInName { at } => format!(
                "JSONPath `{text}` does not parse at character {at}: a member name cannot \
                 contain blanks"
            ),
            Problem::Rewrite { rewritten, reason } => format!(
                "JSONPath `{text}`: its filter was rewritten to `{rewritten}`, which the \
                 JSONPath engine refuses ({reason})"
            ),
        }
    }

    fn help(&self, text: &str) -> String {
        match self {
            Problem::Empty => {
                "write `$` to select the whole data, or `$.name` to select one field".to_string()
            }
            Problem::NoRoot => no_root_help(&super::excerpt(text.trim())),
            Problem::Engine { .. } => "JSONPath follows RFC 9535 and the Jayway spellings of the \
                 drafts, for example `$.customer.name`, `$.items[0]`, `$['first name']`, \
                 `$.people[?(@.age < 40)]` or `$..title`"
                .to_string(),
            Problem::BlankInName { .. } => {
                "quote a name that contains blanks, for example `$.person['first name']`"
                    .to_string()
            }
            Problem::Rewrite { .. } => "this is a bug of the code generator, please report it; \
                 meanwhile compare the member explicitly, for example `[?(@.flag == true)]`"
                .to_string(),
        }
    }
}

/// Help for a path without the root: show the rooted spelling when the intent is clear.
fn no_root_help(text: &str) -> String {
    if let Some(rest) = text.strip_prefix('@') {
        return format!(
            "`@` is the current item and only exists inside filters; start at the root: `${rest}`"
        );
    }
    let rooted = if text.starts_with(['.', '[']) {
        format!("${text}")
    } else {
        format!("$.{text}")
    };
    format!("paths start at the root of the data, `$`: write `{rooted}`")
}

fn classify(text: &str) -> Result<PathKind, Problem> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(Problem::Empty);
    }
    if !trimmed.starts_with('$') {
        return Err(Problem::NoRoot);
    }
    let normalized = Normalized::new(trimmed);
    if let Some(segments) = definite_segments(&normalized.text) {
        return Ok(PathKind::Definite(segments));
    }
    // Engine positions are in the normalized text; point into what the user wrote.
    let leading = text.chars().count() - text.trim_start().chars().count();
    let user_position = |column: usize| leading + normalized.original_char(column) + 1;
    if let Some(column) = blank_inside_name(&normalized.text) {
        return Err(Problem::BlankInName {
            at: user_position(column),
        });
    }
    validate(&normalized.text).map_err(|(reason, column)| Problem::Engine {
        reason,
        at: column.map(user_position),
    })?;
    let rewritten = rewrite_filter_tests(&normalized.text);
    validate(&rewritten).map_err(|(reason, _)| Problem::Rewrite {
        rewritten: rewritten.clone(),
        reason,
    })?;
    Ok(PathKind::Query(rewritten))
}

/// The 1-based column of a word that follows another word after blanks, outside strings.
/// jsonpath-rust reads `$.first name` as the member `first name` (its grammar lets blanks into a
/// member-name shorthand) where Jayway and RFC 9535 refuse it; so do we, rather than select a
/// surprising member. Valid JSONPath never has two words in a row outside strings.
fn blank_inside_name(path: &str) -> Option<usize> {
    let mut quotes = QuoteState::default();
    let mut previous_is_word = false;
    let mut blank_before = false;
    for (i, c) in path.chars().enumerate() {
        if quotes.step(c) {
            previous_is_word = false;
            blank_before = false;
            continue;
        }
        if is_blank(c) {
            blank_before = true;
            continue;
        }
        let is_word = c.is_alphanumeric() || c == '_';
        if is_word && previous_is_word && blank_before {
            return Some(i + 1);
        }
        previous_is_word = is_word;
        blank_before = false;
    }
    None
}

/// Runs the engine's parser: `Err((reason, 1-based column in the checked text))`.
fn validate(path: &str) -> Result<(), (String, Option<usize>)> {
    match parse_json_path(path) {
        Ok(_) => Ok(()),
        Err(JsonPathError::PestError(err)) => Err(describe_pest_error(&err.to_string())),
        Err(err) => Err((err.to_string(), None)),
    }
}

/// Turns pest's multi-line report (`--> 1:3`, the input, a caret, `= expected ...`) into one
/// line and a column, naming the grammar's rules in words a workflow author knows.
fn describe_pest_error(rendered: &str) -> (String, Option<usize>) {
    let column = rendered.lines().find_map(|line| {
        let (_, position) = line.split_once("--> ")?;
        let (_, col) = position.trim().split_once(':')?;
        col.parse::<usize>().ok()
    });
    let reason = rendered
        .lines()
        .find_map(|line| line.trim_start().strip_prefix("= "))
        .map(humanize_rules)
        .unwrap_or_else(|| rendered.split_whitespace().collect::<Vec<_>>().join(" "));
    (reason, column)
}

/// Replaces each grammar rule name in a pest message by what it means.
fn humanize_rules(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut word = String::new();
    for c in message.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        out.push_str(rule_in_words(&word).unwrap_or(&word));
        word.clear();
        out.push(c);
    }
    out.pop();
    out
}

fn rule_in_words(rule: &str) -> Option<&'static str> {
    Some(match rule {
        "wildcard_selector" => "`*`",
        "ALPHA" | "member_name_shorthand" | "name_first" | "name_char" => "a member name",
        "EOI" => "the end of the path",
        "segment" | "child_segment" | "descendant_segment" => "`.name` or `[...]`",
        "selector" | "bracketed_selection" => "a selector (`'name'`, an index, `*` or `?filter`)",
        "name_selector" | "string" => "a quoted string",
        "index_selector" | "int" | "number" => "a number",
        "slice_selector" => "a slice",
        "name_segment" => "`.name` or `['name']`",
        "index_segment" => "`[index]`",
        "filter_selector" => "a filter",
        "logical_expr" | "logical_expr_and" | "atom_expr" | "paren_expr" | "test_expr"
        | "comp_expr" | "test" => "a filter condition",
        "comp_op" => "a comparison operator",
        "comparable" | "literal" => "a value",
        "singular_query" | "rel_singular_query" | "abs_singular_query" | "rel_query"
        | "jp_query" => "a path",
        "function_expr" => "a function call",
        _ => return None,
    })
}

/// The text with the Jayway spellings rewritten, and where each of its characters came from.
struct Normalized {
    text: String,
    /// `origin[i]`: the 0-based character of the input that normalized character `i` copies;
    /// one extra entry for the end of the text.
    origin: Vec<usize>,
}

impl Normalized {
    fn new(path: &str) -> Self {
        let chars: Vec<char> = path.chars().collect();
        // `$.` alone is the whole data.
        if path == "$." {
            return Normalized {
                text: "$".to_string(),
                origin: vec![0, 2],
            };
        }
        let mut text = String::with_capacity(path.len());
        let mut origin = Vec::with_capacity(chars.len() + 1);
        let mut quotes = QuoteState::default();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let in_string = quotes.step(c);
            // `.[` is `[`, but `..[` is the RFC's descendant segment and stays.
            let jayway_dot = !in_string
                && c == '.'
                && chars.get(i + 1) == Some(&'[')
                && (i == 0 || chars[i - 1] != '.');
            // `.exit-code` (Jayway) is `['exit-code']` in RFC 9535, whose shorthand has no
            // dashes; after `..` the bracket follows the dots.
            if !in_string && c == '.' {
                let rest: String = chars[i + 1..].iter().collect();
                if let Some((name, _)) = member_name(&rest)
                    && name.contains('-')
                {
                    let descendant = i > 0 && chars[i - 1] == '.';
                    if descendant {
                        text.push('.');
                        origin.push(i);
                    }
                    text.push_str("['");
                    origin.extend([i, i]);
                    for (offset, name_char) in name.chars().enumerate() {
                        quotes.step(name_char);
                        text.push(name_char);
                        origin.push(i + 1 + offset);
                    }
                    text.push_str("']");
                    let after = i + 1 + name.chars().count();
                    origin.extend([after, after]);
                    i = after;
                    continue;
                }
            }
            if !jayway_dot {
                text.push(c);
                origin.push(i);
            }
            i += 1;
        }
        origin.push(chars.len());
        Normalized { text, origin }
    }

    /// The 0-based input character of a 1-based column of the normalized text.
    fn original_char(&self, column: usize) -> usize {
        let index = column.saturating_sub(1).min(self.origin.len() - 1);
        self.origin[index]
    }
}

/// Tracks JSONPath string literals (single or double quoted, backslash escapes) while scanning.
#[derive(Default)]
struct QuoteState {
    open: Option<char>,
    escaped: bool,
}

impl QuoteState {
    /// Feeds one character; returns whether it belongs to a string literal (quotes included).
    fn step(&mut self, c: char) -> bool {
        match self.open {
            Some(quote) => {
                if self.escaped {
                    self.escaped = false;
                } else if c == '\\' {
                    self.escaped = true;
                } else if c == quote {
                    self.open = None;
                }
                true
            }
            None if c == '\'' || c == '"' => {
                self.open = Some(c);
                true
            }
            None => false,
        }
    }
}

/// The segments of a definite path (`$`, `.name`, `['name']`, `["name"]`, `[N]`, with the
/// whitespace RFC 9535 allows), or `None` when the path is anything else.
fn definite_segments(path: &str) -> Option<Vec<PathSegment>> {
    let mut rest = path.strip_prefix('$')?;
    let mut segments = Vec::new();
    loop {
        rest = rest.trim_start_matches(is_blank);
        if rest.is_empty() {
            return Some(segments);
        }
        let (segment, tail) = if let Some(after) = rest.strip_prefix('.') {
            let (name, tail) = member_name(after)?;
            (PathSegment::Key(name.to_string()), tail)
        } else if let Some(after) = rest.strip_prefix('[') {
            bracket_segment(after)?
        } else {
            return None;
        };
        segments.push(segment);
        rest = tail;
    }
}

/// RFC 9535 blank space.
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// A member-name shorthand (`name` of `.name`) at the start of `text`, and the rest. After its
/// first character a name may hold dashes (`$.exit-code`, `$.steps.flip-coin.outputs`), as
/// Jayway, which the drafts follow, accepts.
fn member_name(text: &str) -> Option<(&str, &str)> {
    let first = text.chars().next()?;
    if !is_name_first(first) {
        return None;
    }
    let end = text
        .find(|c: char| !(is_name_first(c) || c.is_ascii_digit() || c == '-'))
        .unwrap_or(text.len());
    // A trailing dash belongs to what follows (`$.a- 1` in an expression).
    let end = text[..end].trim_end_matches('-').len();
    Some(text.split_at(end))
}

fn is_name_first(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || !c.is_ascii()
}

/// The selector of `[...]` (the text after `[`) when it is one name or one index.
fn bracket_segment(text: &str) -> Option<(PathSegment, &str)> {
    let text = text.trim_start_matches(is_blank);
    let (segment, rest) = match text.chars().next()? {
        quote @ ('\'' | '"') => {
            let (name, rest) = string_literal(&text[1..], quote)?;
            (PathSegment::Key(name), rest)
        }
        '0'..='9' => {
            let end = text
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(text.len());
            let (digits, rest) = text.split_at(end);
            (PathSegment::Index(index(digits)?), rest)
        }
        // `[-1]`, the last element: one element, so the path is still definite (RFC 9535's
        // singular queries and Jayway's definite paths both count it). `-0` is no index.
        '-' => {
            let text = &text[1..];
            let end = text
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(text.len());
            let (digits, rest) = text.split_at(end);
            let from_end = index(digits).filter(|n| *n > 0)?;
            (PathSegment::FromEnd(from_end), rest)
        }
        _ => return None,
    };
    let rest = rest.trim_start_matches(is_blank).strip_prefix(']')?;
    Some((segment, rest))
}

/// An RFC 9535 index: no leading zeros, at most 2^53 - 1.
fn index(digits: &str) -> Option<usize> {
    const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;
    if digits.len() > 1 && digits.starts_with('0') {
        return None;
    }
    let value: u64 = digits.parse().ok()?;
    if value > MAX_SAFE_INTEGER {
        return None;
    }
    usize::try_from(value).ok()
}

/// The value of an RFC 9535 string literal whose opening `quote` was just read, and the text
/// after its closing quote. `None` when it is not a valid literal (the engine then explains).
fn string_literal(text: &str, quote: char) -> Option<(String, &str)> {
    let mut value = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c == quote => return Some((value, &text[i + 1..])),
            '\\' => {
                let (_, escape) = chars.next()?;
                value.push(match escape {
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    '/' | '\\' => escape,
                    e if e == quote => e,
                    'u' => unicode_escape(&mut chars)?,
                    _ => return None,
                });
            }
            c if (c as u32) < 0x20 => return None,
            c => value.push(c),
        }
    }
    None
}

/// The character of `\uXXXX` (after the `u`), joining a surrogate pair `\uD83D\uDE00`.
fn unicode_escape(chars: &mut std::str::CharIndices<'_>) -> Option<char> {
    let hex4 = |chars: &mut std::str::CharIndices<'_>| -> Option<u32> {
        let digits: String = chars.by_ref().take(4).map(|(_, c)| c).collect();
        if digits.len() != 4 {
            return None;
        }
        u32::from_str_radix(&digits, 16).ok()
    };
    let high = hex4(chars)?;
    if !(0xD800..0xDC00).contains(&high) {
        return char::from_u32(high);
    }
    let (_, '\\') = chars.next()? else {
        return None;
    };
    let (_, 'u') = chars.next()? else { return None };
    let low = hex4(chars)?;
    if !(0xDC00..0xE000).contains(&low) {
        return None;
    }
    char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
}

/// What came before the current position in a filter, to tell a test (`[?(@.a)]`, `&& @.a`)
/// from a comparison operand (`== @.a`) or a function argument (`length(@.a)`).
#[derive(Clone, Copy, PartialEq)]
enum Before {
    /// `?`, `!`, `&&`, `||`, or a grouping `(`: a test may start here.
    TestStart,
    /// An identifier or number character, such as a function name.
    Word,
    Other,
}

/// Rewrites each test of a singular query in a filter (`@.a`, `@['a'][0]`, `$.flag`) into a
/// truthiness test, as the drafts' `[?(@.veggieLike)]` example expects: the member is present
/// and is neither `false` nor `null`. Tests of other queries (`@..a`, `@.*`) keep the RFC's
/// existence semantics.
fn rewrite_filter_tests(path: &str) -> String {
    let chars: Vec<char> = path.chars().collect();
    let mut out = String::with_capacity(path.len());
    let mut before = Before::Other;
    let mut quotes = QuoteState::default();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if quotes.step(c) {
            out.push(c);
            before = Before::Other;
            i += 1;
            continue;
        }
        let query_root = c == '@' || (c == '$' && i > 0);
        if query_root && before == Before::TestStart {
            let end = singular_query_end(&chars, i);
            let query: String = chars[i..end].iter().collect();
            if ends_test(&chars, end) {
                out.push_str(&format!("({query} && {query} != false && {query} != null)"));
            } else {
                out.push_str(&query);
            }
            before = Before::Other;
            i = end;
            continue;
        }
        out.push(c);
        if !is_blank(c) {
            before = classify_filter_char(c, chars.get(i + 1).copied(), before);
        }
        i += 1;
    }
    out
}

fn classify_filter_char(c: char, next: Option<char>, before: Before) -> Before {
    match c {
        '?' | '&' | '|' => Before::TestStart,
        '!' if next != Some('=') => Before::TestStart,
        // A `(` after a word opens a function's arguments, which are not tests.
        '(' if before != Before::Word => Before::TestStart,
        c if c.is_alphanumeric() || c == '_' => Before::Word,
        _ => Before::Other,
    }
}

/// The end (exclusive) of the singular query starting at `start` (`@` or `$` followed by
/// `.name`, `['name']` and `[N]` segments without blanks).
fn singular_query_end(chars: &[char], start: usize) -> usize {
    let mut end = start + 1;
    loop {
        let next = match chars.get(end) {
            Some('.') => name_segment_end(chars, end + 1),
            Some('[') => bracket_segment_end(chars, end + 1),
            _ => None,
        };
        match next {
            Some(next) => end = next,
            None => return end,
        }
    }
}

fn name_segment_end(chars: &[char], start: usize) -> Option<usize> {
    if !is_name_first(*chars.get(start)?) {
        return None;
    }
    let len = chars[start..]
        .iter()
        .take_while(|c| is_name_first(**c) || c.is_ascii_digit())
        .count();
    Some(start + len)
}

/// The end of `'name']`, `"name"]` or `N]` (after the `[`), when the selector is one of those.
fn bracket_segment_end(chars: &[char], start: usize) -> Option<usize> {
    let first = *chars.get(start)?;
    let close = if first == '\'' || first == '"' {
        quoted_end(chars, start)?
    } else {
        let digits = chars[start..]
            .iter()
            .enumerate()
            .take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && **c == '-'))
            .count();
        if digits == 0 {
            return None;
        }
        start + digits
    };
    (chars.get(close) == Some(&']')).then_some(close + 1)
}

/// The end (exclusive) of the string literal whose opening quote is at `start`.
fn quoted_end(chars: &[char], start: usize) -> Option<usize> {
    let mut quotes = QuoteState::default();
    quotes.step(chars[start]);
    let len = chars[start + 1..].iter().position(|c| {
        quotes.step(*c);
        quotes.open.is_none()
    })?;
    Some(start + 1 + len + 1)
}

/// Whether a query ending at `end` stands alone as a test: what follows closes or combines it
/// (`)`, `]`, `&&`, `||`, `,`), rather than comparing it or continuing the path.
fn ends_test(chars: &[char], end: usize) -> bool {
    let next = chars[end..].iter().find(|c| !is_blank(**c));
    matches!(next, None | Some(')' | ']' | '&' | '|' | ','))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonpath_rust::query::js_path_process;
    use serde_json::{Value, json};

    const AT: Span = Span::new(9, 5);

    fn path(text: &str) -> (JsonPath, Diagnostics) {
        let mut diags = Diagnostics::new("wf.yaml");
        (parse(text, AT, &mut diags), diags)
    }

    fn kind(text: &str) -> PathKind {
        let (parsed, diags) = path(text);
        assert!(diags.items().is_empty(), "{text}: {:?}", diags.items());
        assert_eq!(parsed.text, text);
        assert_eq!(parsed.span, AT);
        parsed.kind
    }

    fn key(name: &str) -> PathSegment {
        PathSegment::Key(name.to_string())
    }

    fn query(text: &str) -> String {
        match kind(text) {
            PathKind::Query(normalized) => normalized,
            other => panic!("{text}: expected a query, got {other:?}"),
        }
    }

    /// Runs a classified query with the engine, as the runtime does.
    fn run(text: &str, data: &Value) -> Vec<Value> {
        let normalized = query(text);
        let compiled = parse_json_path(&normalized).expect("validated at build time");
        js_path_process(&compiled, data)
            .expect("runs")
            .into_iter()
            .map(|r| r.val.clone())
            .collect()
    }

    fn only_error(text: &str) -> (String, String) {
        let (parsed, diags) = path(text);
        assert_eq!(parsed.kind, PathKind::Invalid, "{text}");
        assert_eq!(diags.items().len(), 1, "{text}: {:?}", diags.items());
        let d = &diags.items()[0];
        assert_eq!(d.code, Code::BAD_JSONPATH);
        assert_eq!(d.span, AT);
        (d.message.clone(), d.help.clone().unwrap_or_default())
    }

    fn vegetables() -> Value {
        json!({
            "fruits": ["apple", "orange", "pear"],
            "vegetables": [
                {"veggieName": "potato", "veggieLike": true},
                {"veggieName": "broccoli", "veggieLike": false},
                {"veggieName": "kale", "veggieLike": null},
                {"veggieName": "leek"}
            ]
        })
    }

    #[test]
    fn definite_paths_become_segments() {
        assert_eq!(kind("$"), PathKind::Definite(vec![]));
        assert_eq!(kind("$."), PathKind::Definite(vec![]));
        assert_eq!(kind("$.fruits"), PathKind::Definite(vec![key("fruits")]));
        assert_eq!(
            kind("$.error.name"),
            PathKind::Definite(vec![key("error"), key("name")])
        );
        assert_eq!(
            kind("$.a['b c'][0]"),
            PathKind::Definite(vec![key("a"), key("b c"), PathSegment::Index(0)])
        );
        assert_eq!(
            kind(r#"$["it's"][ 12 ].x_1"#),
            PathKind::Definite(vec![key("it's"), PathSegment::Index(12), key("x_1")])
        );
        assert_eq!(
            kind(r"$['a\'b\\c\u00e9\uD83D\uDE00']"),
            PathKind::Definite(vec![key("a'b\\cé😀")])
        );
        assert_eq!(
            kind("$.[0]"),
            PathKind::Definite(vec![PathSegment::Index(0)])
        );
        assert_eq!(kind("$.été"), PathKind::Definite(vec![key("été")]));
        assert_eq!(kind("  $.a  "), PathKind::Definite(vec![key("a")]));
        // One element counted from the end is still one place (Jayway and RFC 9535 alike):
        // as a query it yielded `[x]`, and a switch compared the text `[5]`.
        assert_eq!(
            kind("$.items[-1].value"),
            PathKind::Definite(vec![key("items"), PathSegment::FromEnd(1), key("value")])
        );
        assert_eq!(
            kind("$.items[ -12 ]"),
            PathKind::Definite(vec![key("items"), PathSegment::FromEnd(12)])
        );
    }

    #[test]
    fn other_paths_are_engine_queries() {
        assert_eq!(query("$..user.title"), "$..user.title");
        assert_eq!(query("$.items[*]"), "$.items[*]");
        assert_eq!(query("$.items[-1:]"), "$.items[-1:]");
        assert_eq!(query("$.items[0:2]"), "$.items[0:2]");
        assert_eq!(query("$['a','b']"), "$['a','b']");
        assert_eq!(query("$..[0]"), "$..[0]");
        assert_eq!(query("$.people[?(@.age < 40)]"), "$.people[?(@.age < 40)]");
        assert_eq!(
            query("$.orders[?(@.completed == true)]"),
            "$.orders[?(@.completed == true)]"
        );
    }

    #[test]
    fn jayway_dot_before_bracket_is_dropped_outside_strings() {
        assert_eq!(
            query("$.[?(@.veggieLike)]"),
            "$[?((@.veggieLike && @.veggieLike != false && @.veggieLike != null))]"
        );
        assert_eq!(
            query("$.vegetables.[?(@.veggieLike)]"),
            "$.vegetables[?((@.veggieLike && @.veggieLike != false && @.veggieLike != null))]"
        );
        assert_eq!(query("$.a[?(@.b == '.[x')]"), "$.a[?(@.b == '.[x')]");
    }

    #[test]
    fn bare_member_tests_keep_truthy_items() {
        let data = vegetables();
        let liked = json!({"veggieName": "potato", "veggieLike": true});
        assert_eq!(
            run("$.vegetables.[?(@.veggieLike)]", &data),
            vec![liked.clone()]
        );
        assert_eq!(
            run("$.vegetables[?@.veggieLike]", &data),
            vec![liked.clone()]
        );
        // The drafts' two-step form: dataInputPath `$.vegetables`, then dataOutputPath.
        assert_eq!(run("$.[?(@.veggieLike)]", &data["vegetables"]), vec![liked]);
        let names: Vec<Value> = run("$.vegetables[?(!@.veggieLike)].veggieName", &data);
        assert_eq!(names, vec![json!("broccoli"), json!("kale"), json!("leek")]);
    }

    #[test]
    fn the_drafts_filters_select_what_they_describe() {
        let data = json!({
            "people": [{"name": "Ann", "age": 30}, {"name": "Bob", "age": 50}],
            "orders": [{"id": 1, "completed": true}, {"id": 2, "completed": false}],
            "a": {"b": {"user": {"title": "MANAGER"}}}
        });
        assert_eq!(
            run("$.people[?(@.age < 40)]", &data),
            vec![json!({"name": "Ann", "age": 30})]
        );
        assert_eq!(
            run("$.orders[?(@.completed == true)]", &data),
            vec![json!({"id": 1, "completed": true})]
        );
        assert_eq!(run("$..user.title", &data), vec![json!("MANAGER")]);
    }

    #[test]
    fn only_tests_are_rewritten() {
        let rewritten = |text: &str| rewrite_filter_tests(text);
        let t = |q: &str| format!("({q} && {q} != false && {q} != null)");
        // Comparisons, function arguments and non-singular tests stay as they are.
        for unchanged in [
            "$[?@.a == true]",
            "$[?true == @.a]",
            "$[?@.a != false]",
            "$[?length(@.a) > 1]",
            "$[?match(@.a, 'x.*')]",
            "$[?@..a]",
            "$[?@.*]",
            "$[?@.a[1:2]]",
            "$[?@.a['x', 'y']]",
            "$['@.a']",
        ] {
            assert_eq!(rewritten(unchanged), unchanged);
        }
        assert_eq!(rewritten("$[?@]"), format!("$[?{}]", t("@")));
        assert_eq!(
            rewritten("$[?@.a && !@['b c'][0] || $.flag]"),
            format!(
                "$[?{} && !{} || {}]",
                t("@.a"),
                t("@['b c'][0]"),
                t("$.flag")
            )
        );
        assert_eq!(
            rewritten("$.x[?@.a[?(@.b)]]"),
            format!("$.x[?@.a[?({})]]", t("@.b"))
        );
        assert_eq!(
            rewritten("$[?@.a, ?@.b]"),
            format!("$[?{}, ?{}]", t("@.a"), t("@.b"))
        );
        assert_eq!(rewritten("$[?(@[-1])]"), format!("$[?({})]", t("@[-1]")));
        assert_eq!(
            rewritten(r#"$[?(@["x\"]"])]"#),
            format!("$[?({})]", t(r#"@["x\"]"]"#))
        );
        // Every rewrite is still valid RFC 9535.
        for text in ["$[?@]", "$[?@.a && !@['b c'][0] || $.flag]", "$[?(@[-1])]"] {
            assert!(validate(&rewritten(text)).is_ok(), "{text}");
        }
    }

    #[test]
    fn refuses_paths_without_root() {
        let (message, help) = only_error("fruits");
        assert_eq!(message, "JSONPath `fruits` does not start with `$`");
        assert_eq!(
            help,
            "paths start at the root of the data, `$`: write `$.fruits`"
        );
        assert_eq!(
            only_error(".a").1,
            "paths start at the root of the data, `$`: write `$.a`"
        );
        assert_eq!(
            only_error("[0]").1,
            "paths start at the root of the data, `$`: write `$[0]`"
        );
        assert_eq!(
            only_error("@.a").1,
            "`@` is the current item and only exists inside filters; start at the root: `$.a`"
        );
    }

    #[test]
    fn refuses_empty_paths() {
        let (message, help) = only_error("  ");
        assert_eq!(message, "the JSONPath is empty");
        assert!(help.contains("`$`"));
    }

    #[test]
    fn reports_engine_errors_in_words_at_the_users_position() {
        let (message, help) = only_error("$.a.[?(@.x ==)]");
        // The normalized text dropped the `.` before `[`, the position is in the user's text.
        assert!(message.starts_with("JSONPath `$.a.[?(@.x ==)]` does not parse at character "));
        assert!(!message.contains('\n'), "{message}");
        assert!(!message.contains("comp_expr"), "{message}");
        assert!(help.contains("$.people[?(@.age < 40)]"));

        let (message, help) = only_error("$.a.[0].first name");
        assert_eq!(
            message,
            "JSONPath `$.a.[0].first name` does not parse at character 15: a member name \
             cannot contain blanks"
        );
        assert!(help.contains("`$.person['first name']`"), "{help}");
        // Blanks between words inside strings and filters are fine.
        assert_eq!(query("$[?(@['a b'] == 'c d')]"), "$[?(@['a b'] == 'c d')]");

        let (message, _) = only_error("$.a]");
        assert_eq!(
            message,
            "JSONPath `$.a]` does not parse at character 4: expected the end of the path, \
             `.name` or `[...]`, or a member name"
        );

        let (message, _) = only_error(" $.a]");
        assert!(message.contains("at character 5"), "{message}");

        for bad in ["$[", "$.a[01]", "$..", "$.a[?(@.b =~ /x/)]", "$x", "$['a]"] {
            let (message, _) = only_error(bad);
            assert!(message.contains("does not parse"), "{bad}: {message}");
        }
    }

    /// Jayway, which the drafts follow, reads dashes in member names; they were refused.
    #[test]
    fn member_names_may_hold_dashes() {
        let data = json!({"exit-code": 3, "steps": {"flip-coin": {"outputs": "heads"}}});
        let (parsed, diags) = path("$.exit-code");
        assert!(!diags.has_errors(), "{:?}", diags.items());
        assert_eq!(
            parsed.kind,
            PathKind::Definite(vec![PathSegment::Key("exit-code".into())])
        );
        // In a query run by the engine too.
        assert_eq!(run("$.steps.*.outputs", &data), vec![json!("heads")]);
        assert_eq!(run("$..flip-coin.outputs", &data), vec![json!("heads")]);
    }

    #[test]
    fn humanizes_rule_names() {
        assert_eq!(
            humanize_rules("expected wildcard_selector or ALPHA"),
            "expected `*` or a member name"
        );
        assert_eq!(humanize_rules("unexpected foo_bar"), "unexpected foo_bar");
    }

    #[test]
    fn maps_normalized_positions_back() {
        let normalized = Normalized::new("$.a.[0]");
        assert_eq!(normalized.text, "$.a[0]");
        assert_eq!(normalized.original_char(4), 4);
        assert_eq!(normalized.original_char(99), 7);
    }
}
