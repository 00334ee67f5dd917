/* Swagger UI draws its parameter selects without a label and its examples in boxes that
   scroll without taking focus; name each select after its parameter and let a keyboard
   reach each box, as Swagger draws them. */
new MutationObserver(() => {
  document.querySelectorAll("tr[data-param-name] select:not([aria-label])").forEach((select) => {
    select.setAttribute("aria-label", select.closest("tr").dataset.paramName);
  });
  document.querySelectorAll(".swagger-ui pre:not([tabindex])").forEach((pre) => {
    pre.setAttribute("tabindex", "0");
  });
}).observe(document.getElementById("swagger-ui"), { childList: true, subtree: true });
