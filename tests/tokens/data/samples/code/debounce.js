export function debounce(fn, waitMs = 250) {
  let timer = null;
  let lastArgs = [];
  const debounced = (...args) => {
    lastArgs = args;
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      fn.apply(this, lastArgs);
    }, waitMs);
  };
  debounced.cancel = () => {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
  };
  return debounced;
}

document.querySelector("#search").addEventListener(
  "input",
  debounce(async (event) => {
    const res = await fetch(`/api/search?q=${encodeURIComponent(event.target.value)}`);
    const { results } = await res.json();
    renderResults(results.slice(0, 10));
  }, 300),
);
