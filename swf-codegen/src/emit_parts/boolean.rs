//! `&&`, `||` and `!` over generated boolean expressions, parenthesized only where Rust would
//! otherwise regroup them: generated code must stay free of `unused_parens` warnings.

use proc_macro2::TokenStream;
use quote::quote;

/// A boolean expression and its outermost operator.
pub struct BoolExpr {
    pub tokens: TokenStream,
    kind: Kind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A call, an index, a literal, a negation: binds tighter than `&&`.
    Atom,
    And,
    Or,
}

impl BoolExpr {
    pub fn atom(tokens: TokenStream) -> Self {
        BoolExpr {
            tokens,
            kind: Kind::Atom,
        }
    }

    /// The tokens, parenthesized when used as an operand of something binding tighter than
    /// `kind`.
    fn operand(&self, looser_than: Kind) -> TokenStream {
        let tokens = &self.tokens;
        let needs = match looser_than {
            Kind::Atom => self.kind != Kind::Atom,
            Kind::And => self.kind == Kind::Or,
            Kind::Or => false,
        };
        if needs {
            quote!((#tokens))
        } else {
            tokens.clone()
        }
    }
}

/// `a && b && ...`; the empty conjunction is `true`.
pub fn all(items: Vec<BoolExpr>) -> BoolExpr {
    join(items, Kind::And)
}

/// `a || b || ...`; the empty disjunction is `false`.
pub fn any(items: Vec<BoolExpr>) -> BoolExpr {
    join(items, Kind::Or)
}

/// `!a`.
pub fn not(item: BoolExpr) -> BoolExpr {
    let operand = item.operand(Kind::Atom);
    BoolExpr::atom(quote!(!#operand))
}

fn join(mut items: Vec<BoolExpr>, kind: Kind) -> BoolExpr {
    if items.len() <= 1 {
        let empty = if kind == Kind::And {
            quote!(true)
        } else {
            quote!(false)
        };
        return items.pop().unwrap_or_else(|| BoolExpr::atom(empty));
    }
    let parts = items.iter().map(|item| item.operand(kind));
    let tokens = if kind == Kind::And {
        quote!(#(#parts)&&*)
    } else {
        quote!(#(#parts)||*)
    };
    BoolExpr { tokens, kind }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn atom(name: &str) -> BoolExpr {
        let ident = proc_macro2::Ident::new(name, proc_macro2::Span::call_site());
        BoolExpr::atom(quote!(#ident))
    }

    #[test]
    fn parentheses_only_where_rust_would_regroup() {
        let mixed = all(vec![any(vec![atom("a"), atom("b")]), atom("c")]);
        assert_eq!(mixed.tokens.to_string(), "(a || b) && c");
        let plain = any(vec![all(vec![atom("a"), atom("b")]), atom("c")]);
        assert_eq!(plain.tokens.to_string(), "a && b || c");
        assert_eq!(not(plain).tokens.to_string(), "! (a && b || c)");
        assert_eq!(not(atom("a")).tokens.to_string(), "! a");
        assert_eq!(all(Vec::new()).tokens.to_string(), "true");
        assert_eq!(any(Vec::new()).tokens.to_string(), "false");
        assert_eq!(all(vec![atom("a")]).tokens.to_string(), "a");
    }
}
