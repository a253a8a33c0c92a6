//! What a schema reference names: a path relative to the workflow file, or a `file:` URI.
//! Anything fetched over a network is refused: a build must not depend on a server.

use std::path::PathBuf;

pub(super) struct Problem {
    pub message: String,
    pub help: &'static str,
}

/// The path `reference` names, relative to the workflow file's directory unless absolute.
pub(super) fn resolve(reference: &str) -> Result<PathBuf, Problem> {
    let reference = reference.trim();
    if reference.is_empty() {
        return Err(Problem {
            message: "the schema reference is empty".into(),
            help: "name a JSON Schema file, relative to the workflow file",
        });
    }
    match scheme(reference) {
        None => Ok(PathBuf::from(reference)),
        Some(scheme) if scheme.eq_ignore_ascii_case("file") => file_uri(reference),
        Some(scheme) => Err(Problem {
            message: format!(
                "the schema `{reference}` is not a local file (`{scheme}:`): schemas are read when the workflow is compiled, never fetched"
            ),
            help: "vendor the schema: save it next to the workflow and name it by a path relative to the workflow file",
        }),
    }
}

/// The URI scheme of `reference`, if it has one. A single letter is a Windows drive (`C:`),
/// not a scheme.
fn scheme(reference: &str) -> Option<&str> {
    let (scheme, _) = reference.split_once(':')?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (valid && scheme.len() > 1).then_some(scheme)
}

/// `file:relative/path`, `file:/absolute/path`, `file:///absolute/path` or
/// `file://localhost/absolute/path`, with `%XX` escapes decoded.
fn file_uri(reference: &str) -> Result<PathBuf, Problem> {
    let rest = &reference["file:".len()..];
    let path = match rest.strip_prefix("//") {
        None => rest,
        Some(authority_and_path) => {
            let (host, path) = authority_and_path
                .find('/')
                .map_or((authority_and_path, ""), |slash| {
                    authority_and_path.split_at(slash)
                });
            if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
                return Err(Problem {
                    message: format!(
                        "the schema `{reference}` is on another host (`{host}`): schemas are read when the workflow is compiled, never fetched"
                    ),
                    help: "vendor the schema: save it next to the workflow and name it by a path relative to the workflow file",
                });
            }
            path
        }
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let decoded = percent_decoded(path).ok_or_else(|| Problem {
        message: format!("the schema URI `{reference}` has a `%` escape that is not valid UTF-8"),
        help: "write the path with its characters, or escape them as `%XX` UTF-8 bytes",
    })?;
    if decoded.is_empty() {
        return Err(Problem {
            message: format!("the schema URI `{reference}` names no file"),
            help: "name a JSON Schema file, relative to the workflow file",
        });
    }
    Ok(PathBuf::from(decoded))
}

/// `%XX` escapes decoded; `None` when they make invalid UTF-8. A `%` not followed by two hex
/// digits stays as it is.
fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escaped = (bytes[index] == b'%')
            .then(|| bytes.get(index + 1..index + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                index += 3;
            }
            None => {
                out.push(bytes[index]);
                index += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(reference: &str) -> Result<String, String> {
        resolve(reference)
            .map(|p| p.to_string_lossy().into_owned())
            .map_err(|p| p.message)
    }

    #[test]
    fn paths_and_file_uris_name_local_files() {
        assert_eq!(
            resolved("schemas/order.json"),
            Ok("schemas/order.json".into())
        );
        assert_eq!(
            resolved("file:schemas/order.json"),
            Ok("schemas/order.json".into())
        );
        assert_eq!(
            resolved("file:///srv/s/order.json"),
            Ok("/srv/s/order.json".into())
        );
        assert_eq!(
            resolved("file://localhost/srv/a%20b.json"),
            Ok("/srv/a b.json".into())
        );
        assert_eq!(
            resolved("FILE:/srv/order.json#/defs"),
            Ok("/srv/order.json".into())
        );
        assert_eq!(
            resolved("C:/schemas/order.json"),
            Ok("C:/schemas/order.json".into())
        );
    }

    #[test]
    fn remote_and_empty_references_are_refused() {
        let remote = resolved("https://example.com/order.json").unwrap_err();
        assert!(remote.contains("`https:`"), "{remote}");
        let other_host = resolved("file://server/share/order.json").unwrap_err();
        assert!(other_host.contains("`server`"), "{other_host}");
        assert!(resolved("  ").is_err());
        assert!(resolved("file://").is_err());
        assert!(resolved("file:/a%ff.json").is_err());
    }
}
