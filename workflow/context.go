package workflow

// StageContext is what a stage's templates (body, prompt, check.if,
// assert.judge) see: Setup populates it before Init renders the body
// (docs/workflows.md, "lifecycle").
type StageContext struct {
	// Workflow and Stage are the names of the workflow and the stage.
	Workflow, Stage string
	// Attempt is the stage's attempt, from 1 (a retry runs it again).
	Attempt int
	// Inputs are the workflow's inputs, defaults filled.
	Inputs map[string]string
	// State are the state slots written by earlier stages' Exit, by stage
	// name: each is the stage's completion (the completion tool's input,
	// decoded JSON), e.g. {{.State.plan.plan}}.
	State map[string]any
	// Feedback is why the last Assert did not give ok ("" on a first
	// attempt): the failing command's output, the judge's reason.
	Feedback string
}
