-- The Modus server used through Neovim's own LSP client (headless).
-- Run: nvim --headless --clean -c "luafile test/neovim/test.lua"
-- Env: MODUS_INSTALL (a file holding the root README's Install lines for Neovim: they start the
-- server, `modus` from the PATH), MODUS_WS (workspace with script.yaml and notes.md),
-- MODUS_RESULT (where the JSON results go), MODUS_FILES (comma-separated paths the turn edits:
-- each is then saved with :write). Every wait is bounded.
local install = assert(os.getenv('MODUS_INSTALL'), 'MODUS_INSTALL')
local ws = assert(os.getenv('MODUS_WS'), 'MODUS_WS')
local result_file = assert(os.getenv('MODUS_RESULT'), 'MODUS_RESULT')
local edited = vim.split(os.getenv('MODUS_FILES') or '', ',', { trimempty = true })

local results = { steps = {}, updates = {}, approvals = {}, edits = 0, files = {} }

--- The file's bytes, or vim.NIL when there is no such file.
local function disk(path)
  local f = io.open(path, 'rb')
  if not f then return vim.NIL end
  local data = f:read('*a')
  f:close()
  return data
end

local function finish()
  local f = io.open(result_file, 'w')
  f:write(vim.json.encode(results))
  f:close()
  vim.cmd('qa!')
end

-- never hang: give up after 90 s whatever happens
vim.defer_fn(function()
  results.error = 'timed out'
  finish()
end, 90000)

local function step(name, value)
  results.steps[#results.steps + 1] = name
  if value ~= nil then results[name] = value end
end

local function run()
  local default_apply_edit = vim.lsp.handlers['workspace/applyEdit']
  -- Neovim applies documentChanges (CreateFile, TextDocumentEdit) but does not declare
  -- workspaceEdit.documentChanges; the server needs it to send edits instead of writing files.
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  capabilities.workspace.workspaceEdit.documentChanges = true
  -- this client answers modus/client/diagnostics (the README's lines, below)
  capabilities.experimental = { modus = { diagnostics = true } }

  -- what the test adds to the README's lines: a scripted model, the state in the workspace, and
  -- the handlers that record what happens (the README's diagnostics handler among them)
  local extra = {
    capabilities = capabilities,
    init_options = {
      modus = {
        models = { default = { provider = 'scripted', script = 'script.yaml' } },
        modeSwitchDelayMs = 0,
        diagnostics = { delayMs = 300 },
        stateDir = ws .. '/.modus/state',
      },
    },
    handlers = {
      -- Neovim does not declare experimental.modus.approvals: approvals come as
      -- window/showMessageRequest. The default prompts; the test picks "Approve".
      ['window/showMessageRequest'] = function(_, params)
        local titles = {}
        for _, a in ipairs(params.actions or {}) do titles[#titles + 1] = a.title end
        results.approvals[#results.approvals + 1] = { message = params.message, actions = titles }
        for _, a in ipairs(params.actions or {}) do
          if a.title == 'Approve' then return a end
        end
        return vim.NIL
      end,
      ['workspace/applyEdit'] = function(err, params, ctx, config)
        results.edits = results.edits + 1
        return default_apply_edit(err, params, ctx, config)
      end,
      -- README: modus/client/diagnostics
      -- what Neovim knows of the files an edit wrote: Modus tells the agent the new problems
      ['modus/client/diagnostics'] = function(_, params)
        local items = {}
        for _, uri in ipairs(params.uris) do
          local found = {}
          for _, d in ipairs(vim.diagnostic.get(vim.uri_to_bufnr(uri))) do
            found[#found + 1] = {
              range = { start = { line = d.lnum, character = d.col },
                        ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col } },
              severity = d.severity, message = d.message, source = d.source, code = d.code,
            }
          end
          items[#items + 1] = { uri = uri, diagnostics = found }
        end
        return { items = items }
      end,
      -- README: end
      ['modus/update'] = function(_, params)
        local u = { kind = params.kind, status = params.status, name = params.name, to = params.to, result = params.result }
        if params.error then u.error = params.error.type end
        results.updates[#results.updates + 1] = u
      end,
    },
  }
  -- the root README's Install lines, run as a user's init.lua runs them; their vim.lsp.start gets
  -- the test's additions (none of which the README sets)
  local client_id
  local start = vim.lsp.start
  vim.lsp.start = function(config, opts)
    for key in pairs(extra) do assert(config[key] == nil, 'the README sets ' .. key .. ', which the test adds') end
    results.install = { name = config.name, cmd = config.cmd, root_dir = config.root_dir }
    client_id = start(vim.tbl_extend('error', config, extra), opts)
    return client_id
  end
  dofile(install)
  -- a file opened: its FileType starts Modus
  vim.cmd.edit(vim.fn.fnameescape(ws .. '/notes.md'))
  local buf = vim.api.nvim_get_current_buf()
  vim.lsp.start = start
  assert(client_id, 'the README\'s lines started no client')

  -- stands in for a language server: an error on each "from Modus" in notes.md
  local fake_lsp = vim.api.nvim_create_namespace('fake-lsp')
  vim.api.nvim_buf_attach(buf, false, { on_lines = function()
    vim.schedule(function()
      local found = {}
      for n, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
        local at = line:find('from Modus', 1, true)
        if at then
          found[#found + 1] = { lnum = n - 1, col = at - 1, end_col = at + 9, severity = vim.diagnostic.severity.ERROR,
                                message = 'no "from Modus" here', source = 'fake-lsp' }
        end
      end
      vim.diagnostic.set(fake_lsp, buf, found)
    end)
  end })

  local client = assert(vim.lsp.get_client_by_id(client_id))
  assert(vim.wait(15000, function() return client.initialized == true end, 50), 'the server did not initialize')
  step('initialized', client.server_capabilities.experimental)

  -- switch mode through workspace/executeCommand
  local res = client:request_sync('workspace/executeCommand', { command = 'modus.switchMode', arguments = { 'architect' } }, 10000, buf)
  assert(res and not res.err, 'modus.switchMode failed: ' .. vim.inspect(res))
  step('switched', res.result.mode.slug)
  local state = client:request_sync('modus/state', vim.empty_dict(), 10000, buf)
  step('state_mode', state.result.mode.slug)

  -- a chat turn: the scripted model edits notes.md (allowed in Architect: Markdown), the
  -- approval arrives as window/showMessageRequest, the edit as workspace/applyEdit
  local sent = client:request_sync('modus/chat/send', { text = 'Rewrite the notes' }, 10000, buf)
  assert(sent and not sent.err, 'modus/chat/send failed: ' .. vim.inspect(sent))
  step('sent', sent.result.conversationId ~= nil)
  local ended = vim.wait(30000, function()
    for _, u in ipairs(results.updates) do
      if u.kind == 'turn_ended' then return true end
    end
    return false
  end, 50)
  assert(ended, 'the turn did not end')
  step('turn_ended', true)
  results.buffer = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  results.modified = vim.bo[buf].modified
  -- each edited file: its buffer and the disk before :write, then saved as a user would
  for _, rel in ipairs(edited) do
    local path = ws .. '/' .. rel
    local b = vim.fn.bufnr(path)
    assert(b > 0, 'no buffer for ' .. rel)
    local f = { buffer = vim.api.nvim_buf_get_lines(b, 0, -1, false), modified = vim.bo[b].modified, before = disk(path) }
    local ok, err = pcall(vim.api.nvim_buf_call, b, function() vim.cmd('silent write') end)
    if not ok then f.write_error = tostring(err) end
    results.files[rel] = f
  end
  step('saved', true)
  client:stop()
  vim.wait(3000, function() return client:is_stopped() end, 50)
end

local ok, err = xpcall(run, debug.traceback)
if not ok then results.error = tostring(err) end
finish()
