-- Argo CD health check for TerdutServer (terdut.ryuvia.com): paste into the
-- argocd-cm ConfigMap under
--   resource.customizations.health.terdut.ryuvia.com_TerdutServer
-- (README, "GitOps"). Argo CD runs it with gopher-lua (Lua 5.1); `obj` is the
-- resource. Without it Argo CD shows every TerdutServer Healthy.
--
-- Healthy: Ready=True for the current generation. Degraded: Ready=False for a
-- reason a person has to act on (README, the conditions table: a spec the API
-- server or terdut-server refuses, a rollout the Deployment controller gave up
-- on, a Gateway that refuses the route, BootstrapStateLost, a failed key
-- revocation). Suspended: scaled to zero on purpose. Progressing: everything
-- else, the operator working or waiting (a Secret to appear, replicas to
-- start, a key to be reissued).
local needsAction = {
  DeploymentInvalid = true,
  ServerSettingsInvalid = true,
  RouteInvalid = true,
  RolloutStuck = true,
  BootstrapStateLost = true,
  KeyRevocationFailed = true,
  RouteNotAccepted = true,
  GatewayAPINotInstalled = true,
}

local hs = { status = "Progressing", message = "waiting for terdut-operator to report on this resource" }
if obj.status == nil then
  return hs
end
local generation = obj.metadata.generation
if generation ~= nil and (obj.status.observedGeneration == nil or obj.status.observedGeneration < generation) then
  hs.message = "waiting for terdut-operator to act on generation " .. tostring(generation)
  return hs
end
for _, condition in ipairs(obj.status.conditions or {}) do
  if condition.type == "Ready" then
    local current = generation == nil or condition.observedGeneration == nil or condition.observedGeneration >= generation
    hs.message = condition.message or condition.reason or ""
    if not current then
      hs.message = "waiting for terdut-operator to act on generation " .. tostring(generation)
    elseif condition.status == "True" then
      hs.status = "Healthy"
    elseif condition.status == "False" and condition.reason == "ScaledToZero" then
      hs.status = "Suspended"
    elseif condition.status == "False" and needsAction[condition.reason] then
      hs.status = "Degraded"
    end
    return hs
  end
end
return hs
