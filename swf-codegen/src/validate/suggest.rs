//! "Did you mean" suggestions and name lists for help texts.

/// Below this similarity a name is not offered: it would more likely confuse than help.
const THRESHOLD: f64 = 0.8;

/// At most this many names are listed in a help text.
const LIST_LIMIT: usize = 8;

/// The candidate most similar to `wanted`, when one is similar enough to be what was meant.
/// Ties go to the earliest candidate, so the answer follows document order.
pub(super) fn closest<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let wanted = wanted.to_lowercase();
    let mut best: Option<(f64, &'a str)> = None;
    for candidate in candidates {
        let score = similarity(&wanted, &candidate.to_lowercase());
        if score >= THRESHOLD && best.is_none_or(|(top, _)| score > top) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// Jaro-Winkler catches typos near the end and shared prefixes; normalized Damerau-Levenshtein
/// catches swapped or dropped letters anywhere. Either being high is a good sign.
fn similarity(a: &str, b: &str) -> f64 {
    strsim::jaro_winkler(a, b).max(strsim::normalized_damerau_levenshtein(a, b))
}

/// "`a`, `b` and `c`", shortened to the first few names.
pub(crate) fn list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.into_iter().collect();
    let shown: Vec<String> = names
        .iter()
        .take(LIST_LIMIT)
        .map(|name| format!("`{name}`"))
        .collect();
    let hidden = names.len().saturating_sub(LIST_LIMIT);
    match (shown.split_last(), hidden) {
        (None, _) => String::new(),
        (Some((last, [])), 0) => last.clone(),
        (Some((last, rest)), 0) => format!("{} and {last}", rest.join(", ")),
        (Some(_), more) => format!("{} and {more} more", shown.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let names = ["CheckCredit", "Approve", "Reject"];
        assert_eq!(closest("CheckCredti", names), Some("CheckCredit"));
        assert_eq!(closest("aprove", names), Some("Approve"));
        assert_eq!(closest("checkcredit", names), Some("CheckCredit"));
        assert_eq!(closest("SendInvoice", names), None);
        assert_eq!(closest("X", names), None);
    }

    #[test]
    fn ties_go_to_the_first_candidate() {
        assert_eq!(closest("Tax", ["TaxA", "TaxB"]), Some("TaxA"));
    }

    #[test]
    fn lists_names() {
        assert_eq!(list([]), "");
        assert_eq!(list(["a"]), "`a`");
        assert_eq!(list(["a", "b", "c"]), "`a`, `b` and `c`");
        let many: Vec<String> = (0..10).map(|i| format!("t{i}")).collect();
        assert_eq!(
            list(many.iter().map(String::as_str)),
            "`t0`, `t1`, `t2`, `t3`, `t4`, `t5`, `t6`, `t7` and 2 more"
        );
    }
}
