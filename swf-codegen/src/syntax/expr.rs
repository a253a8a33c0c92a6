//! Expressions: transition, retry and onError conditions, parsed into [`Expr`] at build time.
//!
//! Two languages: `jsonpath` (the body is a path, true when it selects a value that is neither
//! `false` nor `null`) and the subset of SpEL that the drafts' examples use:
//!
//! ```text
//! or         := and (("or" | "||") and)*
//! and        := not (("and" | "&&") not)*
//! not        := ("not" | "!") not | comparison
//! comparison := "(" or ")" | operand [compare-op operand | "matches" string]
//! operand    := $-path | name | string | number | true | false | null
//!             | "#jsonPath" "(" name "," string ")"
//! ```
//!
//! Keywords are case-insensitive, as in SpEL. Strings are quoted with `'` or `"` and, as in
//! SpEL, a quote is doubled to appear inside (`'it''s'`); backslashes are plain characters, so
//! regular expressions such as `'^\w+$'` need no extra escaping.

use super::{jsonpath, regex};
use crate::diagnostic::{Code, Diagnostics};
use crate::ir::{CompareOp, Expr, ExprLanguage, Expression, Operand, PathKind};
use crate::source::Span;
use serde_json::{Number, Value};

/// Languages that users may ask for but that are not compiled yet.
const NOT_YET_SUPPORTED: &[&str] = &[
    "cel",
    "jexl",
    "jq",
    "javascript",
    "js",
    "xpath",
    "mvel",
    "groovy",
    "jsonata",
    "python",
];

const SUPPORTED_HELP: &str = "supported expression languages are `spel` (the default) and \
                              `jsonpath`; write the expression in one of them";

/// Reads an expression language name (case-insensitive). An unsupported one records
/// `BAD_LANGUAGE` and returns `None`.
pub fn parse_language(name: &str, span: Span, diags: &mut Diagnostics) -> Option<ExprLanguage> {
    let lower = name.trim().to_ascii_lowercase();
    match lower.as_str() {
        "spel" => return Some(ExprLanguage::Spel),
        "jsonpath" => return Some(ExprLanguage::JsonPath),
        _ => {}
    }
    let (message, help) = if NOT_YET_SUPPORTED.contains(&lower.as_str()) {
        (
            format!("expression language `{name}` is not supported yet"),
            SUPPORTED_HELP.to_string(),
        )
    } else {
        let closest = ["spel", "jsonpath"]
            .into_iter()
            .find(|known| strsim::levenshtein(known, &lower) <= 2);
        let help = match closest {
            Some(known) => format!("did you mean `{known}`? {SUPPORTED_HELP}"),
            None => SUPPORTED_HELP.to_string(),
        };
        (format!("unknown expression language `{name}`"), help)
    };
    diags.error(Code::BAD_LANGUAGE, span, message).help(help);
    None
}

/// Parses an expression body. On error records a diagnostic (`BAD_EXPRESSION`, or the
/// `BAD_JSONPATH`/`BAD_REGEX` of an operand) and the AST is [`Expr::Invalid`].
pub fn parse(
    language: ExprLanguage,
    body: &str,
    span: Span,
    diags: &mut Diagnostics,
) -> Expression {
    let result = match language {
        ExprLanguage::JsonPath => path_operand(body, span, |at| at, diags).map(Expr::Truthy),
        ExprLanguage::Spel => parse_spel(body, span, diags),
    };
    let ast = result.unwrap_or_else(|failure| {
        if let Failure::Syntax(error) = failure {
            diags
                .error(Code::BAD_EXPRESSION, span, error.message(body))
                .help(error.help);
        }
        Expr::Invalid
    });
    Expression {
        language,
        body: body.to_string(),
        ast,
        span,
    }
}

/// Why an expression did not parse.
#[derive(Debug)]
enum Failure {
    /// A syntax error of the expression itself, not yet recorded.
    Syntax(SyntaxError),
    /// An operand's own parser (JSONPath, regex) already recorded its diagnostic.
    Reported,
}

#[derive(Debug)]
struct SyntaxError {
    /// 0-based character offset in the body.
    at: usize,
    /// What is wrong there, e.g. "expected an operand, found `)`".
    what: String,
    help: String,
}

/// A syntax error at character offset `at`: what is wrong there and what to do.
fn syntax_error(at: usize, what: impl Into<String>, help: impl Into<String>) -> Failure {
    Failure::Syntax(SyntaxError {
        at,
        what: what.into(),
        help: help.into(),
    })
}

impl SyntaxError {
    fn message(&self, body: &str) -> String {
        let body = super::excerpt(body);
        format!(
            "expression `{body}` does not parse: {} at character {}",
            self.what,
            self.at + 1
        )
    }
}

const OPERAND_HELP: &str = "an operand is a JSONPath (`$.error.name`), a name (`name`), a \
                            quoted string (`'text'`), a number, `true`, `false`, `null` or \
                            `#jsonPath(data, '$.path')`";

const COMBINE_HELP: &str = "conditions combine with `and`/`&&`, `or`/`||` and `not`/`!`, for \
                            example `$.age >= 18 and not ($.banned == true)`";

/// A JSONPath operand: its diagnostic is recorded by the JSONPath parser. `place` gives, for a
/// 0-based character of the path's text, its 0-based character in the expression's body: the
/// character a diagnostic names ([`Diagnostic::within`](crate::diagnostic::Diagnostic::within))
/// counts from the start of the expression, which is where its span points.
fn path_operand(
    text: &str,
    span: Span,
    place: impl Fn(usize) -> usize,
    diags: &mut Diagnostics,
) -> Result<Operand, Failure> {
    let before = diags.items().len();
    let path = jsonpath::parse(text, span, diags);
    for diagnostic in diags.recorded_since(before) {
        if let Some(at) = diagnostic.within {
            let at = usize::try_from(at).unwrap_or(usize::MAX);
            diagnostic.within(place(at.saturating_sub(1)).saturating_add(1));
        }
    }
    if path.kind == PathKind::Invalid {
        return Err(Failure::Reported);
    }
    Ok(Operand::Path(path))
}

/// The 0-based character of a string literal as written (`'it''s'`, quotes included) that
/// holds the `index`th character of its value: after the opening quote, a doubled quote
/// counting as one character of the value.
fn literal_char(written: &str, index: usize) -> usize {
    let chars: Vec<char> = written.chars().collect();
    let Some(&quote) = chars.first() else {
        return index;
    };
    let mut at = 1;
    for _ in 0..index {
        if chars.get(at) == Some(&quote) && chars.get(at + 1) == Some(&quote) {
            at += 2;
        } else {
            at += 1;
        }
    }
    at
}

/// The most tokens an expression may have. Parsing and code generation recurse once per
/// nesting level, so bounding the size bounds the stack; real conditions use a few dozen.
const MAX_TOKENS: usize = 256;

fn parse_spel(body: &str, span: Span, diags: &mut Diagnostics) -> Result<Expr, Failure> {
    let tokens = tokenize(body)?;
    if let Some(token) = tokens.get(MAX_TOKENS) {
        return Err(syntax_error(
            token.at,
            format!("the expression has more than {MAX_TOKENS} operators and operands"),
            "split the condition, for example by computing part of it in a function or an \
             inject task",
        ));
    }
    let mut parser = Parser {
        tokens,
        pos: 0,
        end: body.chars().count(),
        span,
        diags,
    };
    if parser.tokens.is_empty() {
        return Err(syntax_error(
            0,
            "the expression is empty",
            "write a condition such as `$.age >= 18` or `name eq 'FunctionExecutionError'`",
        ));
    }
    let expr = parser.or()?;
    if let Some(token) = parser.peek() {
        return Err(syntax_error(
            token.at,
            format!("unexpected {}", token.describe()),
            COMBINE_HELP,
        ));
    }
    Ok(expr)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    LParen,
    RParen,
    Comma,
    Compare(CompareOp),
    Matches,
    And,
    Or,
    Not,
    Literal(Value),
    /// The text of a `$` JSONPath.
    Path(String),
    Name(String),
    /// `#name`: a SpEL function.
    Function(String),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    /// 0-based character offset in the body.
    at: usize,
    /// As written, for messages.
    text: String,
}

impl Token {
    fn describe(&self) -> String {
        format!("`{}`", self.text)
    }
}

/// Splits a SpEL body into tokens.
fn tokenize(body: &str) -> Result<Vec<Token>, Failure> {
    let chars: Vec<char> = body.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        let (tok, end) = token_at(&chars, i)?;
        tokens.push(Token {
            tok,
            at: i,
            text: chars[i..end].iter().collect(),
        });
        i = end;
    }
    Ok(tokens)
}

/// The token starting at `i` and the offset just after it.
fn token_at(chars: &[char], i: usize) -> Result<(Tok, usize), Failure> {
    let c = chars[i];
    let next = chars.get(i + 1).copied();
    let two = |tok: Tok| Ok((tok, i + 2));
    let one = |tok: Tok| Ok((tok, i + 1));
    match (c, next) {
        ('(', _) => one(Tok::LParen),
        (')', _) => one(Tok::RParen),
        (',', _) => one(Tok::Comma),
        ('=', Some('=')) => two(Tok::Compare(CompareOp::Eq)),
        ('!', Some('=')) => two(Tok::Compare(CompareOp::Ne)),
        ('<', Some('=')) => two(Tok::Compare(CompareOp::Le)),
        ('>', Some('=')) => two(Tok::Compare(CompareOp::Ge)),
        ('<', _) => one(Tok::Compare(CompareOp::Lt)),
        ('>', _) => one(Tok::Compare(CompareOp::Gt)),
        ('!', _) => one(Tok::Not),
        ('&', Some('&')) => two(Tok::And),
        ('|', Some('|')) => two(Tok::Or),
        ('=', _) => Err(syntax_error(
            i,
            "a single `=`",
            "compare with `==` or `eq`; conditions cannot assign",
        )),
        ('&' | '|', _) => Err(syntax_error(
            i,
            format!("a single `{c}`"),
            "write `&&` or `and`, `||` or `or`",
        )),
        ('\'' | '"', _) => string(chars, i),
        ('$', _) => Ok(path(chars, i)),
        ('#', _) => function(chars, i),
        (c, _) if c.is_ascii_digit() => number(chars, i),
        ('-', Some(d)) if d.is_ascii_digit() => number(chars, i),
        (c, _) if c.is_alphabetic() || c == '_' => word(chars, i),
        ('+' | '-' | '*' | '/' | '%' | '^', _) => Err(syntax_error(
            i,
            format!("the arithmetic operator `{c}`"),
            "conditions compare values but do not compute them; compute the value in a \
             function or an inject task first",
        )),
        _ => Err(syntax_error(i, format!("unexpected `{c}`"), OPERAND_HELP)),
    }
}

/// A quoted string; the quote is doubled to appear inside, as in SpEL.
fn string(chars: &[char], start: usize) -> Result<(Tok, usize), Failure> {
    let quote = chars[start];
    let mut value = String::new();
    let mut i = start + 1;
    while i < chars.len() {
        if chars[i] == quote {
            if chars.get(i + 1) == Some(&quote) {
                value.push(quote);
                i += 2;
                continue;
            }
            return Ok((Tok::Literal(Value::String(value)), i + 1));
        }
        value.push(chars[i]);
        i += 1;
    }
    Err(syntax_error(
        start,
        "the string is not closed",
        format!("end the string with {quote}; write {quote}{quote} for a {quote} inside it"),
    ))
}

/// A `$` JSONPath: up to a blank, or a `)`, `,`, comparison or logical operator, that is outside
/// brackets, parentheses and quotes.
fn path(chars: &[char], start: usize) -> (Tok, usize) {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut i = start;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
        } else {
            match c {
                '\'' | '"' => quote = Some(c),
                '[' | '(' => depth += 1,
                ']' | ')' if depth > 0 => depth -= 1,
                c if depth == 0 && ends_path(c) => break,
                _ => {}
            }
        }
        i += 1;
    }
    (Tok::Path(chars[start..i].iter().collect()), i)
}

fn ends_path(c: char) -> bool {
    c.is_whitespace() || matches!(c, ')' | ',' | '<' | '>' | '=' | '!' | '&' | '|')
}

/// `#name`: only `#jsonPath` exists, checked by the parser to report it in context.
fn function(chars: &[char], start: usize) -> Result<(Tok, usize), Failure> {
    let len = identifier_len(chars, start + 1);
    if len == 0 {
        return Err(syntax_error(
            start,
            "`#` without a function name",
            "the only function is `#jsonPath(data, '$.path')`",
        ));
    }
    let end = start + 1 + len;
    let name = chars[start + 1..end].iter().collect();
    Ok((Tok::Function(name), end))
}

fn identifier_len(chars: &[char], start: usize) -> usize {
    chars[start.min(chars.len())..]
        .iter()
        .enumerate()
        .take_while(|(i, c)| c.is_alphabetic() || **c == '_' || (*i > 0 && c.is_ascii_digit()))
        .count()
}

/// A number: `-`, digits, an optional fraction and exponent. Whole numbers stay integers.
fn number(chars: &[char], start: usize) -> Result<(Tok, usize), Failure> {
    let mut end = start + 1;
    let digits = |end: &mut usize| {
        while chars.get(*end).is_some_and(char::is_ascii_digit) {
            *end += 1;
        }
    };
    digits(&mut end);
    let mut whole = true;
    if chars.get(end) == Some(&'.') && chars.get(end + 1).is_some_and(char::is_ascii_digit) {
        whole = false;
        end += 1;
        digits(&mut end);
    }
    if matches!(chars.get(end), Some('e' | 'E')) {
        let sign = usize::from(matches!(chars.get(end + 1), Some('+' | '-')));
        if chars.get(end + 1 + sign).is_some_and(char::is_ascii_digit) {
            whole = false;
            end += 1 + sign;
            digits(&mut end);
        }
    }
    let text: String = chars[start..end].iter().collect();
    let value = if whole {
        text.parse::<i64>()
            .map(Value::from)
            .or_else(|_| text.parse::<u64>().map(Value::from))
            .ok()
    } else {
        None
    };
    let value = value.or_else(|| {
        let float = text.parse::<f64>().ok()?;
        Number::from_f64(float).map(Value::Number)
    });
    match value {
        Some(value) => Ok((Tok::Literal(value), end)),
        None => Err(syntax_error(
            start,
            format!("the number `{text}` is too large"),
            "use a number within the range of a 64-bit float",
        )),
    }
}

/// A keyword (case-insensitive) or a bare name.
fn word(chars: &[char], start: usize) -> Result<(Tok, usize), Failure> {
    let end = start + identifier_len(chars, start);
    let text: String = chars[start..end].iter().collect();
    let tok = match text.to_ascii_lowercase().as_str() {
        "eq" => Tok::Compare(CompareOp::Eq),
        "ne" => Tok::Compare(CompareOp::Ne),
        "lt" => Tok::Compare(CompareOp::Lt),
        "le" => Tok::Compare(CompareOp::Le),
        "gt" => Tok::Compare(CompareOp::Gt),
        "ge" => Tok::Compare(CompareOp::Ge),
        "and" => Tok::And,
        "or" => Tok::Or,
        "not" => Tok::Not,
        "matches" => Tok::Matches,
        "true" => Tok::Literal(Value::Bool(true)),
        "false" => Tok::Literal(Value::Bool(false)),
        "null" => Tok::Literal(Value::Null),
        _ => Tok::Name(text.clone()),
    };
    // SpEL property access (`error.name`, `items[0]`) is not part of the subset.
    if matches!(tok, Tok::Name(_)) && matches!(chars.get(end), Some('.' | '[' | '?')) {
        return Err(syntax_error(
            start,
            format!("property access on `{text}`"),
            format!(
                "a bare name reads one field of the evaluated object; to go deeper use a \
                 JSONPath such as `$.{text}.field`"
            ),
        ));
    }
    Ok((tok, end))
}

/// Recursive descent over the tokens, one function per precedence level.
struct Parser<'d> {
    tokens: Vec<Token>,
    pos: usize,
    /// Character count of the body, the position of "the end".
    end: usize,
    span: Span,
    diags: &'d mut Diagnostics,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    /// Consumes the next token when `wanted` accepts it.
    fn eat(&mut self, wanted: impl Fn(&Tok) -> bool) -> Option<Token> {
        let token = self.peek().filter(|t| wanted(&t.tok))?.clone();
        self.pos += 1;
        Some(token)
    }

    /// Where the next token starts, and how to name it in a message.
    fn next_place(&self) -> (usize, String) {
        match self.peek() {
            Some(token) => (token.at, format!("found {}", token.describe())),
            None => (self.end, "found the end of the expression".to_string()),
        }
    }

    fn or(&mut self) -> Result<Expr, Failure> {
        let mut lhs = self.and()?;
        while self.eat(|t| *t == Tok::Or).is_some() {
            let rhs = self.and()?;
            lhs = Expr::Or(Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn and(&mut self) -> Result<Expr, Failure> {
        let mut lhs = self.not()?;
        while self.eat(|t| *t == Tok::And).is_some() {
            let rhs = self.not()?;
            lhs = Expr::And(Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn not(&mut self) -> Result<Expr, Failure> {
        if self.eat(|t| *t == Tok::Not).is_some() {
            return Ok(Expr::Not(Box::new(self.not()?)));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr, Failure> {
        if let Some(open) = self.eat(|t| *t == Tok::LParen) {
            let inner = self.or()?;
            if self.eat(|t| *t == Tok::RParen).is_none() {
                let (at, found) = self.next_place();
                return Err(syntax_error(
                    at,
                    format!(
                        "expected `)` to close the `(` at character {}, {found}",
                        open.at + 1
                    ),
                    "add the missing `)`",
                ));
            }
            return Ok(inner);
        }
        let lhs = self.operand()?;
        if let Some(Token {
            tok: Tok::Compare(op),
            ..
        }) = self.eat(|t| matches!(t, Tok::Compare(_)))
        {
            let rhs = self.operand()?;
            return Ok(Expr::Compare { op, lhs, rhs });
        }
        if self.eat(|t| *t == Tok::Matches).is_some() {
            let pattern = self.pattern()?;
            return Ok(Expr::Matches {
                operand: lhs,
                pattern,
            });
        }
        Ok(Expr::Truthy(lhs))
    }

    /// The string literal after `matches`, compiled to check it.
    fn pattern(&mut self) -> Result<String, Failure> {
        let Some(Token {
            tok: Tok::Literal(Value::String(pattern)),
            ..
        }) = self.eat(|t| matches!(t, Tok::Literal(Value::String(_))))
        else {
            let (at, found) = self.next_place();
            return Err(syntax_error(
                at,
                format!("expected a quoted regular expression after `matches`, {found}"),
                "write the pattern as a string literal, for example `name matches '^Func.*'`",
            ));
        };
        if !regex::check(&pattern, self.span, self.diags) {
            return Err(Failure::Reported);
        }
        Ok(pattern)
    }

    fn operand(&mut self) -> Result<Operand, Failure> {
        let Some(token) = self.peek().cloned() else {
            let (at, found) = self.next_place();
            return Err(syntax_error(
                at,
                format!("expected an operand, {found}"),
                OPERAND_HELP,
            ));
        };
        let operand = match token.tok {
            Tok::Literal(value) => Operand::Literal(value),
            Tok::Name(name) => Operand::Name(name),
            Tok::Path(text) => path_operand(&text, self.span, |at| token.at + at, self.diags)?,
            Tok::Function(name) => {
                self.pos += 1;
                return self.json_path_call(&name, token.at);
            }
            _ => {
                return Err(syntax_error(
                    token.at,
                    format!("expected an operand, found {}", token.describe()),
                    OPERAND_HELP,
                ));
            }
        };
        self.pos += 1;
        Ok(operand)
    }

    /// `#jsonPath(data, 'path')` after the function token: the first argument names the
    /// evaluated data (any name), the second is the path.
    fn json_path_call(&mut self, name: &str, at: usize) -> Result<Operand, Failure> {
        const CALL_HELP: &str = "write `#jsonPath(data, '$.path')`: the name of the evaluated \
                                 data, then the JSONPath as a quoted string";
        if !name.eq_ignore_ascii_case("jsonPath") {
            return Err(syntax_error(
                at,
                format!("unknown function `#{name}`"),
                format!("the only function is `#jsonPath(data, '$.path')`; {OPERAND_HELP}"),
            ));
        }
        self.expect(|t| *t == Tok::LParen, "`(` after `#jsonPath`", CALL_HELP)?;
        self.expect(
            |t| matches!(t, Tok::Name(_)),
            "the name of the evaluated data",
            CALL_HELP,
        )?;
        self.expect(|t| *t == Tok::Comma, "`,` after the data name", CALL_HELP)?;
        let path = self.expect(
            |t| matches!(t, Tok::Literal(Value::String(_))),
            "the JSONPath as a quoted string",
            CALL_HELP,
        )?;
        self.expect(
            |t| *t == Tok::RParen,
            "`)` to close `#jsonPath(`",
            CALL_HELP,
        )?;
        let Tok::Literal(Value::String(text)) = path.tok else {
            return Err(syntax_error(path.at, "expected a string", CALL_HELP));
        };
        let written = path.text;
        let place = |at| path.at + literal_char(&written, at);
        path_operand(&text, self.span, place, self.diags)
    }

    fn expect(
        &mut self,
        wanted: impl Fn(&Tok) -> bool,
        what: &str,
        help: &str,
    ) -> Result<Token, Failure> {
        match self.eat(wanted) {
            Some(token) => Ok(token),
            None => {
                let (at, found) = self.next_place();
                Err(syntax_error(at, format!("expected {what}, {found}"), help))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{JsonPath, PathSegment};
    use serde_json::json;

    const AT: Span = Span::new(7, 15);

    fn spel(body: &str) -> Expr {
        let mut diags = Diagnostics::new("wf.yaml");
        let expression = parse(ExprLanguage::Spel, body, AT, &mut diags);
        assert!(diags.items().is_empty(), "{body}: {:?}", diags.items());
        assert_eq!(expression.body, body);
        assert_eq!(expression.span, AT);
        assert_eq!(expression.language, ExprLanguage::Spel);
        expression.ast
    }

    /// The one diagnostic of a body that does not parse: (code, message, help).
    fn error(language: ExprLanguage, body: &str) -> (Code, String, String) {
        let mut diags = Diagnostics::new("wf.yaml");
        let expression = parse(language, body, AT, &mut diags);
        assert_eq!(expression.ast, Expr::Invalid, "{body}");
        assert_eq!(diags.items().len(), 1, "{body}: {:?}", diags.items());
        let d = &diags.items()[0];
        assert_eq!(d.span, AT);
        (
            d.code,
            d.message.clone(),
            d.help.clone().unwrap_or_default(),
        )
    }

    fn spel_error(body: &str) -> (String, String) {
        let (code, message, help) = error(ExprLanguage::Spel, body);
        assert_eq!(code, Code::BAD_EXPRESSION, "{body}: {message}");
        (message, help)
    }

    fn path(text: &str) -> Operand {
        let mut diags = Diagnostics::new("wf.yaml");
        Operand::Path(jsonpath::parse(text, AT, &mut diags))
    }

    fn name(text: &str) -> Operand {
        Operand::Name(text.to_string())
    }

    fn lit(value: Value) -> Operand {
        Operand::Literal(value)
    }

    fn cmp(lhs: Operand, op: CompareOp, rhs: Operand) -> Expr {
        Expr::Compare { op, lhs, rhs }
    }

    fn truthy_name(text: &str) -> Expr {
        Expr::Truthy(name(text))
    }

    /// The character a JSONPath diagnostic names, counted in `body`, with the one it names in
    /// the path `path` written alone.
    fn named_characters(body: &str, path: &str) -> (char, usize, char, usize) {
        let mut diags = Diagnostics::new("wf.yaml");
        jsonpath::parse(path, AT, &mut diags);
        let alone = diags.items()[0].within.expect("names a character") as usize;
        let mut diags = Diagnostics::new("wf.yaml");
        parse(ExprLanguage::Spel, body, AT, &mut diags);
        let [d] = diags.items() else {
            panic!("one diagnostic: {:?}", diags.items())
        };
        assert_eq!((d.code, d.span), (Code::BAD_JSONPATH, AT));
        let inside = d.within.expect("names a character") as usize;
        let nth = |text: &str, at: usize| text.chars().nth(at - 1).expect("inside the text");
        (nth(body, inside), inside, nth(path, alone), alone)
    }

    #[test]
    fn a_jsonpath_error_in_an_expression_names_its_character_in_the_expression() {
        let path = "$.items[?(@.n <)]";
        let body = format!("$.ok == true && {path}");
        let (found, inside, expected, alone) = named_characters(&body, path);
        assert_eq!(found, expected);
        assert_eq!(
            inside,
            alone + body.find(path).expect("the path is in the body")
        );

        // In `#jsonPath(data, '...')`, after the quote, a doubled quote being one character.
        let path = "$.a[?(@.b == 'x')].c[?(@.d <)]";
        let body = "#jsonPath(data, '$.a[?(@.b == ''x'')].c[?(@.d <)]') and true";
        let (found, inside, expected, alone) = named_characters(body, path);
        assert_eq!(found, expected);
        assert!(alone > 15, "the error follows the quotes ({alone})");
        assert_eq!(inside, alone + 17 + 2);
    }

    #[test]
    fn parses_the_drafts_expressions() {
        let error_name = json!("FunctionExecutionError");
        assert_eq!(
            spel("$.error.name eq 'FunctionExecutionError'"),
            cmp(path("$.error.name"), CompareOp::Eq, lit(error_name.clone()))
        );
        assert_eq!(
            spel("$.error.name ne 'FunctionExecutionError'"),
            cmp(path("$.error.name"), CompareOp::Ne, lit(error_name.clone()))
        );
        assert_eq!(
            spel("name ne 'FunctionExecutionError'"),
            cmp(name("name"), CompareOp::Ne, lit(error_name))
        );
        assert_eq!(
            spel("#jsonPath(taskOutputData,'$..user.title') eq 'MANAGER'"),
            cmp(path("$..user.title"), CompareOp::Eq, lit(json!("MANAGER")))
        );
        assert_eq!(
            spel("(event1 or event2) and event3"),
            Expr::And(
                Box::new(Expr::Or(
                    Box::new(truthy_name("event1")),
                    Box::new(truthy_name("event2"))
                )),
                Box::new(truthy_name("event3"))
            )
        );
        assert_eq!(
            spel("$.age >= 18 && !($.banned == true)"),
            Expr::And(
                Box::new(cmp(path("$.age"), CompareOp::Ge, lit(json!(18)))),
                Box::new(Expr::Not(Box::new(cmp(
                    path("$.banned"),
                    CompareOp::Eq,
                    lit(json!(true))
                ))))
            )
        );
        assert_eq!(
            spel("name matches '^Func.*'"),
            Expr::Matches {
                operand: name("name"),
                pattern: "^Func.*".to_string()
            }
        );
        assert_eq!(
            spel(r"$.exception.name matches '^\w+Exception$'"),
            Expr::Matches {
                operand: path("$.exception.name"),
                pattern: r"^\w+Exception$".to_string()
            }
        );
    }

    #[test]
    fn parses_every_comparison_operator() {
        for (word, symbol, op) in [
            ("eq", "==", CompareOp::Eq),
            ("ne", "!=", CompareOp::Ne),
            ("lt", "<", CompareOp::Lt),
            ("le", "<=", CompareOp::Le),
            ("gt", ">", CompareOp::Gt),
            ("ge", ">=", CompareOp::Ge),
        ] {
            let expected = cmp(name("a"), op, lit(json!(1)));
            assert_eq!(spel(&format!("a {word} 1")), expected);
            assert_eq!(spel(&format!("a {} 1", word.to_uppercase())), expected);
            assert_eq!(spel(&format!("a {symbol} 1")), expected);
            assert_eq!(spel(&format!("a{symbol}1")), expected);
        }
        // A path ends at an operator even without blanks.
        assert_eq!(
            spel("$.a>=1"),
            cmp(path("$.a"), CompareOp::Ge, lit(json!(1)))
        );
    }

    #[test]
    fn precedence_is_or_then_and_then_not_then_comparison() {
        let a = || truthy_name("a");
        let b = || truthy_name("b");
        let c = || truthy_name("c");
        assert_eq!(
            spel("a or b and c"),
            Expr::Or(
                Box::new(a()),
                Box::new(Expr::And(Box::new(b()), Box::new(c())))
            )
        );
        assert_eq!(
            spel("not a eq 1 || b"),
            Expr::Or(
                Box::new(Expr::Not(Box::new(cmp(
                    name("a"),
                    CompareOp::Eq,
                    lit(json!(1))
                )))),
                Box::new(b())
            )
        );
        assert_eq!(
            spel("NOT NOT a"),
            Expr::Not(Box::new(Expr::Not(Box::new(a()))))
        );
        assert_eq!(spel("((a))"), a());
    }

    #[test]
    fn parses_literals() {
        for (text, value) in [
            ("'it''s'", json!("it's")),
            (r#""say ""hi""""#, json!("say \"hi\"")),
            ("'a\\b'", json!("a\\b")),
            ("''", json!("")),
            ("42", json!(42)),
            ("-7", json!(-7)),
            ("18446744073709551615", json!(18446744073709551615u64)),
            ("2.5", json!(2.5)),
            ("-0.25", json!(-0.25)),
            ("1e3", json!(1000.0)),
            ("99999999999999999999", json!(1e20)),
            ("true", json!(true)),
            ("False", json!(false)),
            ("null", Value::Null),
        ] {
            assert_eq!(
                spel(&format!("x == {text}")),
                cmp(name("x"), CompareOp::Eq, lit(value)),
                "{text}"
            );
        }
        assert_eq!(spel("true"), Expr::Truthy(lit(json!(true))));
    }

    #[test]
    fn parses_path_operands() {
        assert_eq!(spel("$.flag"), Expr::Truthy(path("$.flag")));
        assert_eq!(
            spel("$.people[?(@.age < 40)] != null"),
            cmp(
                path("$.people[?(@.age < 40)]"),
                CompareOp::Ne,
                lit(Value::Null)
            )
        );
        assert_eq!(
            spel("$['a b'] == 'x y'"),
            cmp(path("$['a b']"), CompareOp::Eq, lit(json!("x y")))
        );
        assert_eq!(spel("($.a)"), Expr::Truthy(path("$.a")));
        let Expr::Truthy(Operand::Path(JsonPath { kind, .. })) =
            spel("#JSONPATH(data, \"$.a[0]\")")
        else {
            panic!("not a path");
        };
        assert_eq!(
            kind,
            PathKind::Definite(vec![PathSegment::Key("a".into()), PathSegment::Index(0)])
        );
    }

    #[test]
    fn the_jsonpath_language_is_a_truthy_path() {
        let mut diags = Diagnostics::new("wf.yaml");
        let expression = parse(
            ExprLanguage::JsonPath,
            "$.orders[?(@.completed)]",
            AT,
            &mut diags,
        );
        assert!(diags.items().is_empty());
        assert_eq!(
            expression.ast,
            Expr::Truthy(path("$.orders[?(@.completed)]"))
        );

        let (code, message, _) = error(ExprLanguage::JsonPath, "orders");
        assert_eq!(code, Code::BAD_JSONPATH);
        assert!(message.contains("does not start with `$`"));
    }

    #[test]
    fn operand_errors_keep_their_own_codes() {
        let (code, message, _) = error(ExprLanguage::Spel, "$.a[ == 1");
        assert_eq!(code, Code::BAD_JSONPATH, "{message}");
        let (code, _, _) = error(ExprLanguage::Spel, "#jsonPath(d, 'a.b') == 1");
        assert_eq!(code, Code::BAD_JSONPATH);
        let (code, message, _) = error(ExprLanguage::Spel, "name matches '(unclosed'");
        assert_eq!(code, Code::BAD_REGEX);
        assert!(message.contains("unclosed group"));
    }

    #[test]
    fn reports_syntax_errors_with_position_and_help() {
        let cases: &[(&str, &str, &str)] = &[
            ("", "the expression is empty at character 1", "$.age >= 18"),
            (
                "   ",
                "the expression is empty at character 1",
                "$.age >= 18",
            ),
            (
                "$.a eq",
                "expected an operand, found the end of the expression at character 7",
                "`$.error.name`",
            ),
            (
                "a eq )",
                "expected an operand, found `)` at character 6",
                "an operand is",
            ),
            ("a b", "unexpected `b` at character 3", "`and`"),
            (
                "(a or b",
                "expected `)` to close the `(` at character 1, found the end of the expression at character 8",
                "add the missing `)`",
            ),
            ("a)", "unexpected `)` at character 2", "`and`"),
            ("a = 1", "a single `=` at character 3", "`==`"),
            ("a & b", "a single `&` at character 3", "`&&`"),
            ("a | b", "a single `|` at character 3", "`||`"),
            ("'open", "the string is not closed at character 1", "'"),
            (
                "a + 1 > 2",
                "the arithmetic operator `+` at character 3",
                "compute",
            ),
            ("a ~ b", "unexpected `~` at character 3", "an operand is"),
            (
                "name matches 5",
                "expected a quoted regular expression after `matches`, found `5` at character 14",
                "'^Func.*'",
            ),
            (
                "name matches",
                "expected a quoted regular expression after `matches`, found the end of the expression at character 13",
                "'^Func.*'",
            ),
            (
                "error.name eq 'x'",
                "property access on `error` at character 1",
                "`$.error.field`",
            ),
            (
                "#foo(a, '$')",
                "unknown function `#foo` at character 1",
                "#jsonPath",
            ),
            (
                "# x",
                "`#` without a function name at character 1",
                "#jsonPath",
            ),
            (
                "#jsonPath a",
                "expected `(` after `#jsonPath`, found `a` at character 11",
                "#jsonPath(data",
            ),
            (
                "#jsonPath('$.a')",
                "expected the name of the evaluated data, found `'$.a'` at character 11",
                "#jsonPath(data",
            ),
            (
                "#jsonPath(d '$.a')",
                "expected `,` after the data name, found `'$.a'` at character 13",
                "#jsonPath(data",
            ),
            (
                "#jsonPath(d, $.a)",
                "expected the JSONPath as a quoted string, found `$.a` at character 14",
                "#jsonPath(data",
            ),
            (
                "#jsonPath(d, '$.a'",
                "expected `)` to close `#jsonPath(`, found the end of the expression at character 19",
                "#jsonPath(data",
            ),
            ("a == 1 == 2", "unexpected `==` at character 8", "`and`"),
            ("(a) eq 1", "unexpected `eq` at character 5", "`and`"),
            (
                "not",
                "expected an operand, found the end of the expression at character 4",
                "an operand is",
            ),
            (
                "a and",
                "expected an operand, found the end of the expression at character 6",
                "an operand is",
            ),
            (
                "1e999 > a",
                "the number `1e999` is too large at character 1",
                "64-bit",
            ),
        ];
        for (body, what, in_help) in cases {
            let (message, help) = spel_error(body);
            assert_eq!(
                message,
                format!("expression `{body}` does not parse: {what}"),
                "{body}"
            );
            assert!(help.contains(in_help), "{body}: {help}");
        }
    }

    #[test]
    fn bounds_the_size_of_expressions() {
        let nested = |depth: usize| format!("{}a{}", "(".repeat(depth), ")".repeat(depth));
        assert_eq!(spel(&nested((MAX_TOKENS - 1) / 2)), truthy_name("a"));
        let (message, help) = spel_error(&nested(100_000));
        assert!(
            message.ends_with(&format!(
                "the expression has more than {MAX_TOKENS} operators and operands at character \
                 {}",
                MAX_TOKENS + 1
            )),
            "{message}"
        );
        assert!(help.contains("split"));
        let (message, _) = spel_error(&"not ".repeat(100_000));
        assert!(message.contains("more than"));
    }

    #[test]
    fn reads_language_names() {
        let mut diags = Diagnostics::new("wf.yaml");
        assert_eq!(
            parse_language("spel", AT, &mut diags),
            Some(ExprLanguage::Spel)
        );
        assert_eq!(
            parse_language("SpEL", AT, &mut diags),
            Some(ExprLanguage::Spel)
        );
        assert_eq!(
            parse_language("jsonPath", AT, &mut diags),
            Some(ExprLanguage::JsonPath)
        );
        assert_eq!(
            parse_language(" JSONPATH ", AT, &mut diags),
            Some(ExprLanguage::JsonPath)
        );
        assert!(diags.items().is_empty());
    }

    #[test]
    fn refuses_other_languages_listing_the_supported_ones() {
        for (name, message, help_start) in [
            (
                "cel",
                "expression language `cel` is not supported yet",
                "supported",
            ),
            (
                "JEXL",
                "expression language `JEXL` is not supported yet",
                "supported",
            ),
            (
                "spell",
                "unknown expression language `spell`",
                "did you mean `spel`?",
            ),
            (
                "json-path",
                "unknown expression language `json-path`",
                "did you mean `jsonpath`?",
            ),
            ("foo", "unknown expression language `foo`", "supported"),
        ] {
            let mut diags = Diagnostics::new("wf.yaml");
            assert_eq!(parse_language(name, AT, &mut diags), None);
            let d = &diags.items()[0];
            assert_eq!(d.code, Code::BAD_LANGUAGE);
            assert_eq!(d.message, message);
            let help = d.help.as_deref().unwrap();
            assert!(help.starts_with(help_start), "{help}");
            assert!(
                help.contains("`spel` (the default) and `jsonpath`"),
                "{help}"
            );
        }
    }
}
