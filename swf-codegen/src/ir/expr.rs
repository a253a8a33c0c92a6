use super::JsonPath;
use crate::source::Span;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A boolean expression (transition condition, retry or onError condition), parsed at build time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Expression {
    pub language: ExprLanguage,
    pub body: String,
    pub ast: Expr,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExprLanguage {
    /// The subset of Spring Expression Language the drafts use.
    Spel,
    /// True when the path selects at least one value that is not `false` or `null`.
    JsonPath,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Expr {
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Compare {
        op: CompareOp,
        lhs: Operand,
        rhs: Operand,
    },
    /// `operand matches 'regex'`; the pattern is checked at build time.
    Matches {
        operand: Operand,
        pattern: String,
    },
    /// A lone operand, true unless it is absent, `null` or `false`.
    Truthy(Operand),
    /// Did not parse; a diagnostic has been recorded.
    Invalid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Operand {
    Literal(Value),
    /// `$.a.b` or `#jsonPath(data, '$.a.b')`: selects from the evaluated data.
    Path(JsonPath),
    /// A bare name such as `name` or `message`: a field of the scope object (the error object
    /// for onError and retry conditions, the task data otherwise).
    Name(String),
}
