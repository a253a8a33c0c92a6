//! The earlier drafts' conditions over trigger names (v0.1 `eventActions.condition`, the
//! kebab-case drafts' `event-expression`): `(a or b) and c`, read with the spel parser into an
//! [`EventExpr`]. Trigger names that are not identifiers (`order-placed`) are aliased for the
//! parser and restored after.

use super::lowering::Lowering;
use crate::diagnostic::Code;
use crate::ir::{EventExpr, Expr, ExprLanguage, Operand};
use crate::source::{Span, Spanned};
use crate::syntax;

/// How the dialect names the condition, for messages.
pub(in crate::parse) struct Wording {
    /// `` `event-expression` `` or `event condition`.
    pub what: &'static str,
    pub help: &'static str,
}

/// The condition `text` states over `triggers`, and the trigger names it mentions (in order,
/// once each). A condition that does not parse or is not over names alone is reported; the
/// names it mentions are still returned, so that nothing else is reported because of it.
pub(in crate::parse) fn read(
    cx: &mut Lowering<'_>,
    text: &Spanned<String>,
    triggers: &[String],
    wording: &Wording,
) -> (Option<EventExpr>, Vec<Spanned<String>>) {
    let aliases = trigger_aliases(triggers);
    let body = substitute(&text.value, &aliases);
    let parsed = syntax::expr::parse(ExprLanguage::Spel, &body, text.span, cx.diags);
    let unalias = |name: &str| {
        aliases
            .iter()
            .find(|(_, alias)| alias == name)
            .map_or_else(|| name.to_owned(), |(trigger, _)| trigger.clone())
    };
    if parsed.ast == Expr::Invalid {
        // Already reported.
        cx.recovered = true;
        return (None, mentioned_triggers(triggers, &text.value, text.span));
    }
    match event_expr(&parsed.ast, text.span, &unalias) {
        Ok(condition) => {
            let mut refs: Vec<Spanned<String>> = Vec::new();
            for name in condition.events() {
                if !refs.iter().any(|r| r.value == name.value) {
                    refs.push(name.clone());
                }
            }
            (Some(condition), refs)
        }
        Err(found) => {
            cx.diags
                .error(
                    Code::BAD_EVENT_CONDITION,
                    text.span,
                    format!(
                        "{} `{}` is not over trigger names alone: it has {found}, which cannot \
                         be waited for",
                        wording.what,
                        syntax::excerpt(&text.value)
                    ),
                )
                .help(wording.help);
            cx.recovered = true;
            (None, mentioned_triggers(triggers, &text.value, text.span))
        }
    }
}

/// `(trigger, alias)` for each trigger name that is not a plain identifier (`order-placed`):
/// the alias replaces its other characters with `_`, keeping the length so that positions
/// in messages stay right.
fn trigger_aliases(triggers: &[String]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for trigger in triggers {
        if is_identifier(trigger) {
            continue;
        }
        let alias: String = trigger
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let taken = triggers.contains(&alias) || out.iter().any(|(_, a)| *a == alias);
        if is_identifier(&alias) && !taken {
            out.push((trigger.clone(), alias));
        }
    }
    out
}

/// The trigger names that appear as words of `text`, in order of definition.
fn mentioned_triggers(triggers: &[String], text: &str, span: Span) -> Vec<Spanned<String>> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .collect();
    triggers
        .iter()
        .filter(|t| words.contains(&t.as_str()))
        .map(|t| Spanned::new(t.clone(), span))
        .collect()
}

/// The event condition an expression states, or what in it is not one.
fn event_expr(
    expr: &Expr,
    span: Span,
    unalias: &dyn Fn(&str) -> String,
) -> Result<EventExpr, &'static str> {
    match expr {
        Expr::Truthy(Operand::Name(name)) => {
            Ok(EventExpr::Event(Spanned::new(unalias(name), span)))
        }
        Expr::And(a, b) => Ok(EventExpr::All(flatten(
            [event_expr(a, span, unalias)?, event_expr(b, span, unalias)?],
            true,
        ))),
        Expr::Or(a, b) => Ok(EventExpr::Any(flatten(
            [event_expr(a, span, unalias)?, event_expr(b, span, unalias)?],
            false,
        ))),
        Expr::Not(_) => Err("`not`"),
        Expr::Compare { .. } => Err("a comparison"),
        Expr::Matches { .. } => Err("a `matches` test"),
        Expr::Truthy(Operand::Path(_)) => Err("a JSONPath"),
        Expr::Truthy(Operand::Literal(_)) => Err("a literal value"),
        Expr::Invalid => Err("a part that does not parse"),
    }
}

/// `a and (b and c)` is `All[a, b, c]`.
fn flatten(items: [EventExpr; 2], all: bool) -> Vec<EventExpr> {
    let mut out = Vec::new();
    for item in items {
        match item {
            EventExpr::All(inner) if all => out.extend(inner),
            EventExpr::Any(inner) if !all => out.extend(inner),
            other => out.push(other),
        }
    }
    out
}

/// A name the expression parser reads as one bare name.
fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphabetic() || c == '_' || c.is_ascii_digit())
}

/// `text` with each whole-word occurrence of a trigger replaced by its alias (longest names
/// first, so that `a-b-c` is not taken for `a-b`).
fn substitute(text: &str, aliases: &[(String, String)]) -> String {
    if aliases.is_empty() {
        return text.to_owned();
    }
    let mut ordered: Vec<&(String, String)> = aliases.iter().collect();
    ordered.sort_by_key(|(trigger, _)| std::cmp::Reverse(trigger.len()));
    let chars: Vec<char> = text.chars().collect();
    let boundary = |i: Option<&char>| i.is_none_or(|c| c.is_whitespace() || *c == '(' || *c == ')');
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    'outer: while i < chars.len() {
        if i == 0 || boundary(chars.get(i - 1)) {
            for (trigger, alias) in &ordered {
                let len = trigger.chars().count();
                let matches = chars.len() >= i + len
                    && chars[i..i + len].iter().copied().eq(trigger.chars())
                    && boundary(chars.get(i + len));
                if matches {
                    out.push_str(alias);
                    i += len;
                    continue 'outer;
                }
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}
