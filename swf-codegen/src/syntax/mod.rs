//! Parsers for the small languages embedded in workflow files: JSONPath, expressions, durations.
