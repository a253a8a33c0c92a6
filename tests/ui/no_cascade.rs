// The workflow has an error, but code that uses its names sees only that error: the macro still
// emits the trait (with the functions it could read), the state enum and the machine.
use swf_runtime::{FunctionError, Value, json};

swf_runtime::workflow!("ui/no_cascade.sw.yaml");

struct Mailer;

impl NoCascadeFunctions for Mailer {
    async fn send_email(&self, args: Value) -> Result<Value, FunctionError> {
        Ok(args)
    }
}

fn main() {
    let machine = NoCascadeWorkflow::new(Mailer);
    let _ = machine.run(json!({}));
    let _: Option<NoCascadeState> = None;
}
