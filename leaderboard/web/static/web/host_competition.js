// The host's create and edit pages: a defense-chain builder over the registry's parameters (read from the
// page's "defense-catalogue" JSON) and validation as the host types, by the site's own validation endpoint.
// The chain's JSON text area stays the one source of truth: the builder writes it, and typing in it rebuilds
// the builder. A static file, as the site's Content-Security-Policy allows scripts from the site only.
(function () {
  "use strict";

  const form = document.getElementById("competition-form");
  const catalogueNode = document.getElementById("defense-catalogue");
  if (!form || !catalogueNode) {
    return;
  }
  const catalogue = JSON.parse(catalogueNode.textContent);
  const byName = {};
  catalogue.forEach(function (defense) { byName[defense.name] = defense; });
  const textarea = form.querySelector("textarea[name=defenses]");
  const builder = document.getElementById("chain-builder");
  const stepsNode = builder.querySelector(".chain-steps");
  const adder = document.getElementById("chain-add");
  const preview = document.getElementById("disclosure-preview");
  const status = document.getElementById("validation-status");
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  let chain = [];
  let timer = null;
  let sequence = 0;

  function parseChain(text) {
    if (text.trim() === "") {
      return [];
    }
    try {
      const value = JSON.parse(text);
      if (Array.isArray(value) && value.every(function (item) {
        return item !== null && typeof item === "object" && !Array.isArray(item);
      })) {
        return value;
      }
    } catch (error) {
      return null;
    }
    return null;
  }

  function applies(param, step) {
    return Object.keys(param.when).every(function (key) {
      const given = key in step ? step[key] : defaultOf(step.name, key);
      return param.when[key].indexOf(given) !== -1;
    });
  }

  function defaultOf(name, key) {
    const defense = byName[name];
    const param = defense && defense.parameters.find(function (p) { return p.name === key; });
    return param ? param.default : undefined;
  }

  // A typed value as the chain's JSON holds it: numbers as numbers, a list of numbers for "numbers" with
  // commas, true/false for booleans; anything else stays text, for the server to refuse with its message.
  function typed(param, text) {
    const trimmed = text.trim();
    if (param.type === "boolean") {
      return trimmed === "true" ? true : trimmed === "false" ? false : trimmed;
    }
    if (param.type === "choice") {
      return trimmed;
    }
    function number(part) {
      const value = Number(part.trim());
      return part.trim() !== "" && Number.isFinite(value) ? value : part.trim();
    }
    if (param.type === "numbers" && trimmed.indexOf(",") !== -1) {
      return trimmed.replace(/^\[|\]$/g, "").split(",").map(number);
    }
    return number(trimmed);
  }

  function shown(value) {
    if (value === undefined || value === null) {
      return "";
    }
    return Array.isArray(value) ? value.join(", ") : String(value);
  }

  function control(param, step, index) {
    const id = "chain-" + index + "-" + param.name;
    const label = document.createElement("label");
    label.htmlFor = id;
    label.className = "param";
    const name = document.createElement("code");
    name.textContent = param.name;
    label.appendChild(name);
    let input;
    if (param.type === "choice" || param.type === "boolean") {
      input = document.createElement("select");
      const options = param.type === "boolean" ? ["true", "false"] : param.choices;
      const unset = document.createElement("option");
      unset.value = "";
      unset.textContent = "default (" + (param.default === null ? "none" : String(param.default)) + ")";
      input.appendChild(unset);
      options.forEach(function (choice) {
        const option = document.createElement("option");
        option.value = choice;
        option.textContent = choice;
        input.appendChild(option);
      });
      input.value = param.name in step ? String(step[param.name]) : "";
    } else {
      input = document.createElement("input");
      input.type = "text";
      input.inputMode = param.type === "integer" ? "numeric" : "decimal";
      input.value = shown(step[param.name]);
      input.placeholder = param.default !== null ? shown(param.default) : (param.default_text || (param.required ? "required" : ""));
    }
    input.id = id;
    input.dataset.step = String(index);
    input.dataset.param = param.name;
    const kind = param.type === "choice" ? param.range : param.type === "boolean" ? "true or false"
      : param.type + (param.range ? " " + param.range : "");
    const hint = [kind, param.help];
    if (param.excludes.length) {
      hint.push("not with " + param.excludes.join(", "));
    }
    input.title = hint.join("; ");
    label.appendChild(input);
    const help = document.createElement("span");
    help.className = "helptext";
    help.textContent = hint.join("; ");
    label.appendChild(help);
    return label;
  }

  function render() {
    stepsNode.textContent = "";
    chain.forEach(function (step, index) {
      const item = document.createElement("li");
      item.className = "chain-step";
      item.dataset.step = String(index);
      const head = document.createElement("div");
      head.className = "chain-head";
      const title = document.createElement("strong");
      title.textContent = String(step.name);
      head.appendChild(title);
      const defense = byName[step.name];
      if (defense) {
        const stage = document.createElement("span");
        stage.className = "muted";
        stage.textContent = " (" + defense.stage + " stage) " + defense.summary;
        head.appendChild(stage);
      }
      [["up", "↑", "Move up"], ["down", "↓", "Move down"], ["remove", "Remove", "Remove this defense"]].forEach(
        function (spec) {
          const button = document.createElement("button");
          button.type = "button";
          button.dataset.action = spec[0];
          button.dataset.step = String(index);
          button.textContent = spec[1];
          button.title = spec[2];
          head.appendChild(button);
        }
      );
      item.appendChild(head);
      if (defense) {
        const params = document.createElement("div");
        params.className = "chain-params";
        defense.parameters.forEach(function (param) {
          if (applies(param, step)) {
            params.appendChild(control(param, step, index));
          }
        });
        item.appendChild(params);
      }
      stepsNode.appendChild(item);
    });
  }

  function writeChain() {
    textarea.value = JSON.stringify(chain);
    schedule();
  }

  stepsNode.addEventListener("input", function (event) {
    const input = event.target;
    if (!input.dataset || input.dataset.param === undefined) {
      return;
    }
    const step = chain[Number(input.dataset.step)];
    const param = byName[step.name].parameters.find(function (p) { return p.name === input.dataset.param; });
    if (input.value.trim() === "") {
      delete step[param.name];
    } else {
      step[param.name] = typed(param, input.value);
    }
    if (input.tagName === "SELECT") {
      // A choice can change which parameters apply (the noise's kind, the Ladder's mode).
      Object.keys(step).forEach(function (key) {
        const other = byName[step.name].parameters.find(function (p) { return p.name === key; });
        if (other && !applies(other, step)) {
          delete step[key];
        }
      });
      render();
    }
    writeChain();
  });
  stepsNode.addEventListener("click", function (event) {
    const button = event.target.closest("button[data-action]");
    if (!button) {
      return;
    }
    const index = Number(button.dataset.step);
    const action = button.dataset.action;
    if (action === "remove") {
      chain.splice(index, 1);
    } else {
      const other = action === "up" ? index - 1 : index + 1;
      if (other < 0 || other >= chain.length) {
        return;
      }
      const moved = chain[index];
      chain[index] = chain[other];
      chain[other] = moved;
    }
    render();
    writeChain();
  });
  adder.addEventListener("change", function () {
    if (adder.value) {
      chain.push({ name: adder.value });
      adder.value = "";
      render();
      writeChain();
    }
  });
  textarea.addEventListener("input", function () {
    const parsed = parseChain(textarea.value);
    if (parsed !== null) {
      chain = parsed;
      render();
    }
  });

  function showErrors(errors, position) {
    form.querySelectorAll("[data-errors-for]").forEach(function (list) {
      list.textContent = "";
      (errors[list.dataset.errorsFor] || []).forEach(function (message) {
        const item = document.createElement("li");
        item.textContent = message;
        list.appendChild(item);
      });
    });
    stepsNode.querySelectorAll(".chain-step").forEach(function (item) {
      item.classList.toggle("invalid", position !== null && Number(item.dataset.step) === position - 1);
    });
  }

  function validate() {
    const body = new FormData(form);
    body.delete("labels_file");
    if (form.dataset.competition) {
      body.set("competition", form.dataset.competition);
    }
    const mine = ++sequence;
    status.textContent = "Checking…";
    fetch(form.dataset.validateUrl, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrf, "Accept": "application/json" },
    }).then(function (response) {
      return response.json().then(function (data) { return { ok: response.ok, data: data }; });
    }).then(function (answer) {
      if (mine !== sequence) {
        return;  // a newer check is on its way
      }
      if (!answer.ok) {
        status.textContent = answer.data.detail || "The check failed.";
        return;
      }
      const data = answer.data;
      showErrors(data.errors, data.chain_position);
      preview.innerHTML = data.preview;  // rendered (and escaped) by the site's own templates
      const problems = Object.keys(data.errors).length;
      status.textContent = problems === 0 ? "Every setting is valid." : problems === 1
        ? "1 setting needs fixing." : problems + " settings need fixing.";
      status.className = problems === 0 ? "ok" : "error-text";
    }).catch(function () {
      if (mine === sequence) {
        status.textContent = "Could not reach the site to check the settings.";
      }
    });
  }

  function schedule() {
    window.clearTimeout(timer);
    timer = window.setTimeout(validate, 250);
  }

  form.addEventListener("input", function (event) {
    if (event.target.type !== "file") {
      schedule();
    }
  });
  form.addEventListener("change", function (event) {
    if (event.target.tagName === "SELECT" && !stepsNode.contains(event.target)) {
      schedule();
    }
  });

  const initial = parseChain(textarea.value);
  chain = initial === null ? [] : initial;
  builder.hidden = false;
  render();
  if (initial === null || form.querySelector(".errorlist li")) {
    schedule();
  }
}());
