// Placeholder until this page group is built (issue 15).
export default function PipelineEditorPage() {
  return <p>PipelineEditorPage is not built yet.</p>;
}
