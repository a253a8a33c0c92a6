swf_runtime::workflow!("ui/many_problems.sw.yaml");

fn main() {}
