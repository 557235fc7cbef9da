// Placeholder until this page group is built (issue 15).
export default function PipelinesPage() {
  return <p>PipelinesPage is not built yet.</p>;
}
