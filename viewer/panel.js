// The panel folds to its title and back: on a small window its controls would cover most of the data.

/** Makes `button` fold and unfold `panel`; returns the setter (true: folded), for the page to fold it itself. */
export function foldable(panel, button) {
  const set = (folded) => {
    panel.classList.toggle('folded', folded);
    button.setAttribute('aria-expanded', String(!folded));
    button.textContent = folded ? '▸' : '▾';
    button.title = folded ? 'show the controls' : 'hide the controls';
  };
  button.addEventListener('click', () => set(!panel.classList.contains('folded')));
  set(false);
  return set;
}
