// The panel folds to its title and back: on a small window its controls would cover most of the data.

/**
 * Makes `button` fold and unfold `panel`. `crowded()` says whether the panel, as it is laid out now, would cover most
 * of the map. Returns `{ set, fit }`: `set(folded)` folds it (true) or unfolds it, `fit()` folds it where it is crowded
 * and unfolds it where it was folded so and has room again; a fold or unfold by hand is left as it is.
 */
export function foldable(panel, button, crowded) {
  // Folded by the page for want of room (not by a click): unfolded again once the window has it.
  let forRoom = false;
  const set = (folded) => {
    panel.classList.toggle('folded', folded);
    button.setAttribute('aria-expanded', String(!folded));
    button.textContent = folded ? '▸' : '▾';
    button.title = folded ? 'show the controls' : 'hide the controls';
  };
  button.addEventListener('click', () => {
    forRoom = false;
    set(!panel.classList.contains('folded'));
  });
  // Folded, the panel still says why tiles failed, cut to a few lines (viewer.css): a tap on that unfolds it all.
  panel.addEventListener('click', (e) => {
    if (panel.classList.contains('folded') && e.target instanceof Element && e.target.closest('#status .problem')) button.click();
  });
  set(false);
  const fit = () => {
    const folded = panel.classList.contains('folded');
    if (folded && !forRoom) return;
    // Measured unfolded (no paint comes between): folded, the panel is a title bar that crowds nothing.
    if (folded) panel.classList.remove('folded');
    const fold = crowded();
    set(fold);
    forRoom = fold;
  };
  return { set, fit };
}
