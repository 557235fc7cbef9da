// Placeholder until this page group is built (issue 15).
export default function PluginPage() {
  return <p>PluginPage is not built yet.</p>;
}
