// Placeholder until this page group is built (issue 15).
export default function PluginsPage() {
  return <p>PluginsPage is not built yet.</p>;
}
