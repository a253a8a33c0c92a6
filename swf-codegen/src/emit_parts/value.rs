//! JSON values in generated code, built at run time from literals (inject data, produced event
//! data, expression literals). Objects keep the document's key order.

use proc_macro2::{Literal, TokenStream};
use quote::quote;
use serde_json::{Number, Value};

/// An expression of type `::swf_runtime::__private::Value` equal to `value`.
pub fn json(value: &Value) -> TokenStream {
    match value {
        Value::Null => quote! { ::swf_runtime::__private::Value::Null },
        Value::Bool(b) => quote! { ::swf_runtime::__private::Value::Bool(#b) },
        Value::Number(n) => number(n),
        Value::String(s) => {
            let s = Literal::string(s);
            quote! { ::swf_runtime::__private::Value::from(#s) }
        }
        Value::Array(items) => {
            let items = items.iter().map(json);
            quote! { ::swf_runtime::__private::Value::Array(::std::vec![#(#items),*]) }
        }
        Value::Object(map) => {
            let members = map.iter().map(|(key, value)| {
                let key = Literal::string(key);
                let value = json(value);
                quote! { (#key, #value) }
            });
            quote! { ::swf_runtime::__private::object([#(#members),*]) }
        }
    }
}

/// Keeps the number's kind: `u64`, `i64` or `f64`, suffixed so the right `From` impl is chosen.
fn number(n: &Number) -> TokenStream {
    let literal = if let Some(u) = n.as_u64() {
        Literal::u64_suffixed(u)
    } else if let Some(i) = n.as_i64() {
        Literal::i64_suffixed(i)
    } else {
        match n.as_f64().filter(|f| f.is_finite()) {
            Some(f) => Literal::f64_suffixed(f),
            // serde_json refuses NaN and infinities, so this cannot come from a workflow file.
            None => return quote! { ::core::compile_error!("swf: a number that is not finite") },
        }
    };
    quote! { ::swf_runtime::__private::Value::from(#literal) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit_parts::pretty;
    use serde_json::json;

    fn emitted(value: Value) -> String {
        pretty::expression(json(&value))
    }

    #[test]
    fn scalars_are_literals() {
        assert!(emitted(json!(null)).contains("::swf_runtime::__private::Value::Null"));
        assert!(emitted(json!(true)).contains("::swf_runtime::__private::Value::Bool(true)"));
        assert!(emitted(json!(7)).contains("::swf_runtime::__private::Value::from(7u64)"));
        assert!(emitted(json!(-7)).contains("::swf_runtime::__private::Value::from(-7i64)"));
        assert!(emitted(json!(2.5)).contains("::swf_runtime::__private::Value::from(2.5f64)"));
        assert!(
            emitted(json!("say \"hi\"\n"))
                .contains(r#"::swf_runtime::__private::Value::from("say \"hi\"\n")"#)
        );
        assert!(emitted(json!(i64::MIN)).contains("Value::from(-9223372036854775808i64)"));
        assert!(emitted(json!(u64::MAX)).contains("Value::from(18446744073709551615u64)"));
    }

    #[test]
    fn objects_insert_in_document_order() {
        let text = emitted(json!({"zeta": 1, "alpha": [true, {}], "mid": {"x": null}}));
        assert_eq!(
            text,
            r#"fn emitted() {
    ::swf_runtime::__private::object([
        ("zeta", ::swf_runtime::__private::Value::from(1u64)),
        (
            "alpha",
            ::swf_runtime::__private::Value::Array(
                ::std::vec![
                    ::swf_runtime::__private::Value::Bool(true),
                    ::swf_runtime::__private::object([])
                ],
            ),
        ),
        (
            "mid",
            ::swf_runtime::__private::object([
                ("x", ::swf_runtime::__private::Value::Null),
            ]),
        ),
    ])
}
"#
        );
    }

    #[test]
    fn emission_is_deterministic() {
        let value = json!({"b": [1, -2, 3.5, "x"], "a": {"c": null}});
        assert_eq!(json(&value).to_string(), json(&value.clone()).to_string());
    }
}
